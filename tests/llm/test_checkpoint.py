"""resolve_checkpoint: folders pass through, GGUF files are converted once, safely under concurrency.

The conversion itself is exercised for real by every test that loads the model (conftest's
`model_folder`); here transformers' loaders are replaced by fakes so the race and the error paths are fast.
"""
import json
import sys
import threading
import time
from types import SimpleNamespace

import pytest
import transformers

from models.llm.checkpoint import resolve_checkpoint
from models.paths import ModelNotFoundError


class _FakePretrained:
    """Stands in for a GGUF-loaded model/tokenizer: slow to save, writes a config.json."""

    loads = 0

    def __init__(self):
        self.config = SimpleNamespace(quantization_config="gguf")
        self.hf_quantizer = "gguf quantizer"

    @classmethod
    def from_pretrained(cls, folder, gguf_file=None, **kwargs):
        assert gguf_file == "tiny.gguf"
        cls.loads += 1
        return cls()

    def save_pretrained(self, folder):
        # transformers refuses to save while the GGUF quantizer is attached; the fake checks the same
        assert self.hf_quantizer is None and not hasattr(self.config, "quantization_config")
        time.sleep(0.2)  # long enough for two converters to overlap
        (folder / "config.json").write_text(json.dumps({"saved_by": threading.get_ident()}))


class _FakeTokenizer(_FakePretrained):
    def __init__(self):
        self.config = SimpleNamespace()
        self.hf_quantizer = None

    def save_pretrained(self, folder):
        (folder / "tokenizer.json").write_text("{}")


@pytest.fixture()
def fake_transformers(monkeypatch):
    _FakePretrained.loads = 0
    # The module object in sys.modules now, not the one imported when this file was collected: loading a real
    # model earlier in the session can leave transformers' lazy module replaced in sys.modules.
    module = sys.modules["transformers"]
    monkeypatch.setattr(module, "AutoModelForCausalLM", _FakePretrained)
    monkeypatch.setattr(module, "AutoTokenizer", _FakeTokenizer)


def test_a_folder_is_used_as_it_is(tmp_path):
    (tmp_path / "org" / "model").mkdir(parents=True)
    assert resolve_checkpoint("org/model", str(tmp_path), str(tmp_path / "cache")) == tmp_path / "org" / "model"


def test_missing_and_unusable_paths(tmp_path):
    with pytest.raises(ModelNotFoundError, match="LLM was not found"):
        resolve_checkpoint("org/missing", str(tmp_path), str(tmp_path / "cache"))
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(ValueError, match="not a .gguf"):
        resolve_checkpoint("weights.bin", str(tmp_path), str(tmp_path / "cache"))


def test_gguf_is_converted_once_even_when_two_threads_race(tmp_path, fake_transformers):
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    cache = tmp_path / "cache"
    results, errors = [], []

    def convert():
        try:
            results.append(resolve_checkpoint(str(tmp_path / "tiny.gguf"), str(tmp_path), str(cache)))
        except Exception as exc:  # surfaced by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=convert) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and results == [cache / "tiny", cache / "tiny"]
    assert sorted(p.name for p in cache.iterdir()) == ["tiny"]  # no temporary folder left behind
    assert sorted(p.name for p in (cache / "tiny").iterdir()) == ["config.json", "tokenizer.json"]
    loads = _FakePretrained.loads
    assert resolve_checkpoint(str(tmp_path / "tiny.gguf"), str(tmp_path), str(cache)) == cache / "tiny"
    assert _FakePretrained.loads == loads  # the cached folder is reused
