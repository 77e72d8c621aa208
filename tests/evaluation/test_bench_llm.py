"""scripts/bench_llm.py measures the CPU profile's model: its generators are the profile's LLM section (adapters
included), so the KG request it times, which asks for the api_generation adapter, is one the profile can serve."""
import evaluation.bench.llm as bench
from tests.stand_ins import ServesAnyAdapter


class ProfileGenerator(ServesAnyAdapter):
    """Stands in for HFGenerator: refuses an adapter its config does not name, as the real one does."""

    def __init__(self, config, models_dir):
        self.config = config

    def generate(self, requests):
        for request in requests:
            assert request.adapter is None or request.adapter in self.config.adapters, request.adapter
        return ["get_movie(\"avatar\")[\"budget\"]" for _ in requests]


def test_the_bench_builds_the_profiles_llm_with_its_adapters(monkeypatch, capsys):
    import models.llm.hf_backend as hf_backend

    monkeypatch.setattr(hf_backend, "HFGenerator", ProfileGenerator)
    monkeypatch.setattr(bench, "tokens_per_second", lambda generator, batch, new_tokens, repeats: 1.0)
    assert bench.bench_llm(new_tokens=2, repeats=1) == 0
    out = capsys.readouterr().out
    assert "| float32 | 1.0 | 1.0 |" in out and "grammar mask" in out
