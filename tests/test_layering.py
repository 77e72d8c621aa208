"""The house's floors, read from the code's own imports (`ast`, nothing is run).

- `models/` is the product the grader runs: it imports no other first-party package (`mock_api`, `evaluation`, `scripts`,
  `training`, `local_evaluation`, ...); those sit above it and import it.
- Inside `models/`, the components (pathways, LLM layer, embedder, base types) never import the floors that
  assemble them: `config`, `adapter_fallback`, `pipeline`, `crag_model`, `user_config`.
- The KG language package imports no LLM, HTTP or model code.
- The top-level floors, bottom to top: models < mock_api < evaluation < training < submission, with
  local_evaluation.py beside training (the evaluation's command line): each imports only floors below it.
- No module outside tests/ is longer than about 450 lines (`MODULE_LINES`): a longer one holds more
  than one idea and is split by concern.
- Inside evaluation/, the evaluator (its top-level modules) imports none of its subpackages (experiments/, bench/,
  acceptance/, servers/), which import it.
- `scripts/` are command lines over the libraries: none edits `sys.path`, imports another script, or grows past a
  screenful of argument parsing; nothing imports a script but the tests of its command line, and no test loads a
  file by its path.
"""
import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO / "models"
ASSEMBLY = ("models.config", "models.adapter_fallback", "models.assembly", "models.pipeline", "models.crag_model",
            "models.user_config")
NOT_IN_THE_LANGUAGE = ("models.llm", "models.kg.client", "models.kg.pathway", "models.embedder", "requests",
                       "http", "urllib", "httpx", "torch", "transformers", "vllm")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module `path` imports, absolute (relative imports resolved), wherever the import stands."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]) if node.level else ""
            found.add(".".join(part for part in (base, node.module) if part))
    return found


def first_party_packages() -> set[str]:
    return {p.stem for p in REPO.iterdir() if (p.suffix == ".py" or (p / "__init__.py").exists() or p.name
                                                in ("scripts", "tests")) and not p.name.startswith(".")} - {"models"}


def within(name: str, prefixes) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


MODULES = sorted(MODELS.rglob("*.py"))


def test_the_scan_sees_the_house():
    names = {module_name(path) for path in MODULES}
    assert {"models.pipeline", "models.kg.language.parser", "models.embedder"} <= names
    assert {"mock_api", "evaluation", "scripts", "submission", "training", "local_evaluation"} <= first_party_packages()
    assert "models.config" in imports(MODELS / "pipeline.py")  # the scan reads imports at all


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_models_imports_no_package_above_it(path):
    above = first_party_packages()
    assert not {name for name in imports(path) if within(name, above)}


@pytest.mark.parametrize("path", [p for p in MODULES if not within(module_name(p), ASSEMBLY)],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_components_do_not_import_what_assembles_them(path):
    assert not {name for name in imports(path) if within(name, ASSEMBLY)}


@pytest.mark.parametrize("path", sorted((MODELS / "kg" / "language").rglob("*.py")), ids=lambda p: p.name)
def test_the_kg_language_imports_no_llm_or_http_code(path):
    assert not {name for name in imports(path) if within(name, NOT_IN_THE_LANGUAGE)}


SCRIPTS = sorted((REPO / "scripts").glob("*.py"))
SCRIPT_LINES = 100  # a usage docstring, the imports, argument parsing and one call


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_a_script_is_a_thin_command_line(path):
    text = path.read_text(encoding="utf-8")
    assert "sys.path" not in text
    assert not {name for name in imports(path) if within(name, ("scripts",))}
    assert len(text.splitlines()) <= SCRIPT_LINES


def test_only_command_line_tests_import_scripts_and_nothing_loads_a_file_by_path():
    libraries = [p for package in ("models", "evaluation", "training", "submission", "mock_api")
                 for p in (REPO / package).rglob("*.py")]
    assert not [p for p in libraries if within_any(imports(p), ("scripts",))]
    tests = [p for p in sorted((REPO / "tests").rglob("*.py")) if p != Path(__file__).resolve()]
    assert not [p for p in tests if "spec_from_file_location" in p.read_text(encoding="utf-8")]


def within_any(names, prefixes) -> bool:
    return any(within(name, prefixes) for name in names)


FLOORS = ("models", "mock_api", "evaluation", "training", "submission")  # bottom to top
BESIDE = {"local_evaluation": "training"}  # a top-level file and the floor it stands on the level of


def floor_files(floor: str) -> list[Path]:
    return [REPO / f"{floor}.py"] if (REPO / f"{floor}.py").exists() else sorted((REPO / floor).rglob("*.py"))


@pytest.mark.parametrize("floor", [*FLOORS, *BESIDE])
def test_each_floor_imports_only_the_floors_below_it(floor):
    level = FLOORS.index(BESIDE.get(floor, floor))
    above = [f for f in FLOORS[level + (0 if floor in BESIDE else 1):] if f != floor] + [b for b in BESIDE if b != floor]
    looked_back = {(str(path.relative_to(REPO)), name) for path in floor_files(floor)
                   for name in imports(path) if within(name, above)}
    assert not looked_back


EVALUATION_ROOMS = ("evaluation.experiments", "evaluation.bench", "evaluation.acceptance", "evaluation.servers")


@pytest.mark.parametrize("path", sorted((REPO / "evaluation").glob("*.py")), ids=lambda p: p.name)
def test_the_evaluator_imports_none_of_its_rooms(path):
    assert not {name for name in imports(path) if within(name, EVALUATION_ROOMS)}


def test_the_rooms_are_there():
    assert {p.name for p in (REPO / "evaluation").iterdir() if (p / "__init__.py").exists()} == \
        {name.split(".")[1] for name in EVALUATION_ROOMS}
    assert (REPO / "training" / "gate" / "__init__.py").exists()


MODULE_LINES = 460  # about 450: the longest, evaluation/answer_match.py, is one matcher per kind of answer


def test_no_module_outside_the_tests_is_over_the_line_limit():
    modules = [p for floor in (*FLOORS, "scripts") for p in floor_files(floor)] + [REPO / "local_evaluation.py"]
    long = {str(p.relative_to(REPO)): n for p in modules
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES}
    assert not long
