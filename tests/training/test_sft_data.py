"""The SFT file format (round trip, validation) and the resumable build around it."""
import json

import pytest

from training import build_sft_data as B
from training.labels import EMPTY_CONTEXT, RETRYABLE, UNJUDGED, LabelDecision, Outcome
from training.sft_data import SFTFormatError, SFTRecord, SFTWriter, parse_record, read_records, skipped_path

CHAT = ({"role": "system", "content": "be brief"}, {"role": "user", "content": "<DOC>\nx\n</DOC>\nq?"},
        {"role": "assistant", "content": "Jean Dujardin"})


def test_round_trip(tmp_path):
    record = SFTRecord("id-1", CHAT, "web_answer", "judged_correct", {"prediction": "jean dujardin", "domain": "movie"})
    path = tmp_path / "sft.jsonl"
    with SFTWriter(path) as writer:
        writer.write(record)
    assert list(read_records(path)) == [record]
    row = json.loads(path.read_text())
    assert row["label"] == "Jean Dujardin" and row["messages"][-1]["role"] == "assistant"


@pytest.mark.parametrize("messages,error", [
    (None, "at least a user and an assistant"),
    ([{"role": "user", "content": "q"}], "at least a user and an assistant"),
    ([{"role": "user", "content": "q"}, {"role": "bot", "content": "a"}], "role 'bot'"),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": 3}], "no text content"),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "  "}], "non-empty assistant label"),
    ([{"role": "system", "content": "s"}, {"role": "assistant", "content": "a"}], "no user message"),
    (["user: q", "assistant: a"], "not an object"),
])
def test_bad_records_are_rejected(messages, error):
    with pytest.raises(SFTFormatError, match=error):
        parse_record({"id": "x", "messages": messages})


def test_reading_skips_bad_lines_unless_strict(tmp_path):
    path = tmp_path / "sft.jsonl"
    good = SFTRecord("a", CHAT).to_json()
    path.write_text(good + "\n{not json\n" + json.dumps({"messages": []}) + "\n\n")
    assert [r.id for r in read_records(path)] == ["a"]
    with pytest.raises(SFTFormatError, match=":2:"):
        list(read_records(path, strict=True))


class _CountingBuilder:
    """Labels every example with its query as the label, except ids in `skip` (skipped with `reason`)."""

    def __init__(self, skip=(), reason=UNJUDGED):
        self.skip, self.reason, self.seen = set(skip), reason, []

    def label_batch(self, examples):
        self.seen.append([e["interaction_id"] for e in examples])
        outcomes = []
        for e in examples:
            if e["interaction_id"] in self.skip:
                outcomes.append(Outcome(e["interaction_id"], LabelDecision(None, self.reason), None, {}))
            else:
                messages = CHAT[:2] + ({"role": "assistant", "content": e["query"]},)
                record = SFTRecord(e["interaction_id"], messages, "web_answer", "judged_correct")
                outcomes.append(Outcome(e["interaction_id"], LabelDecision(e["query"], "judged_correct"), record, {}))
        return outcomes


def test_build_resumes_and_retries_only_retryable_skips(tmp_path, make_example):
    examples = [make_example(f"id{i}", f"q{i}", "a") for i in range(5)]
    path = tmp_path / "out.jsonl"
    first = _CountingBuilder(skip={"id1"}, reason=UNJUDGED)
    with SFTWriter(path, RETRYABLE) as writer:
        B.build(examples[:3], first, writer, batch_size=2)
    assert first.seen == [["id0", "id1"], ["id2"]]
    second = _CountingBuilder(skip={"id3"}, reason=EMPTY_CONTEXT)
    with SFTWriter(path, RETRYABLE) as writer:
        counts = B.build(examples, second, writer, batch_size=10)
    assert second.seen == [["id1", "id3", "id4"]]  # id1 was unjudged, so it is tried again
    assert counts == {"judged_correct": 2, EMPTY_CONTEXT: 1}
    third = _CountingBuilder()
    with SFTWriter(path, RETRYABLE) as writer:
        B.build(examples, third, writer)
    assert third.seen == []  # id3's empty context is permanent
    assert [r.id for r in read_records(path)] == ["id0", "id2", "id1", "id4"]
    summary = B.summarize(path)
    assert summary["records"] == 4 and summary["skipped"] == 1 and summary["retryable_skips"] == 0
    assert {"label": "(skipped)", "reason": EMPTY_CONTEXT, "count": 1} in summary["by_label_and_reason"]
    table = B.format_summary(summary)
    assert "gold answer  judged_correct  4" in table and "4 records, 1 skipped" in table
    assert skipped_path(path).name == "out.skipped.jsonl"


def test_select_split(make_example):
    examples = [make_example("a", "q", "x", split=0), make_example("b", "q", "x", split=1)]
    assert [e["interaction_id"] for e in B.select_split(examples, "1")] == ["b"]
    assert len(list(B.select_split(examples, "all"))) == 2


def test_a_killed_run_leaves_a_readable_file(tmp_path):
    path = tmp_path / "sft.jsonl"
    path.write_text(SFTRecord("a", CHAT).to_json() + "\n" + '{"id": "b", "messa')
    with SFTWriter(path) as writer:
        assert writer.done == {"a"}
        writer.write(SFTRecord("c", CHAT))
    assert [r.id for r in read_records(path)] == ["a", "c"]  # the torn line stays alone, ignored
