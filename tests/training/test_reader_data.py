"""The answer reader's training examples: the TinyLettuce errors, the passage, the sources, the held-out rule and the
byte-identical rebuild of the committed file."""
import json
import random

from models.jsonl import read_jsonl
from models.paths import REPO_ROOT
from models.verify.reader import PASSAGE_CHARS, passage
from training.reader import errors
from training.reader.examples import OUTPUT, WEB_QUESTIONS, build, make_reader_data, rows_text, traced_bases

EVIDENCE = ("Inception is a 2010 science fiction film directed by Christopher Nolan. It was released on July 16, "
            "2010. Its budget was 160 million dollars. Leonardo DiCaprio and Elliot Page star in it.",)


def test_another_entity_is_of_the_answers_kind_from_the_same_evidence_and_never_the_answer():
    rng = random.Random(0)
    names = {errors.other_entity("who directed inception?", "Christopher Nolan", EVIDENCE, rng) for _ in range(20)}
    assert names == {"Leonardo DiCaprio", "Elliot Page"}  # not the answer, the question's film, "It" or "July"
    score = ("The home team scored 3 goals from 12 shots.",)
    assert errors.other_entity("how many goals did they score?", "3", score, rng) == "12"
    dated = EVIDENCE + ("It premiered on July 8, 2010.",)
    assert errors.other_entity("when was it released?", "July 16, 2010", dated, rng) == "July 8, 2010"
    assert errors.other_entity("when?", "July 16, 2010", ("Nothing dated here.",), rng) is None


def test_a_changed_value_is_another_number_or_date_and_a_name_has_none():
    rng = random.Random(1)
    assert errors.changed_value("160", rng) not in (None, "160")
    changed = errors.changed_value("July 16, 2010", rng)
    assert changed and changed != "July 16, 2010" and errors.answer_shape(changed) == "date"
    assert errors.changed_value("Christopher Nolan", rng) is None


def test_a_moved_answer_goes_to_a_question_with_another_answer():
    queries = ["who directed inception?", "who directed heat?", "who wrote inception?"]
    answers = ["christopher nolan", "michael mann", "christopher nolan"]
    assert {errors.moved_answer(0, queries, answers, random.Random(s)) for s in range(10)} == {"who directed heat?"}
    assert errors.moved_answer(0, queries[:1], answers[:1], random.Random(0)) is None


def test_the_opposite_sentence_negates_the_sentence_that_states_the_answer():
    changed = errors.opposite_sentence("Christopher Nolan", EVIDENCE)
    assert "Inception is not a 2010 science fiction film directed by Christopher Nolan." in changed[0]
    assert "It was released on July 16, 2010." in changed[0]  # the other sentences are left as they were
    assert errors.opposite_sentence("Ridley Scott", EVIDENCE) is None


def test_the_passage_keeps_the_sentence_with_the_answer_within_its_length():
    long = ("Filler sentence about nothing in particular number %d." % i for i in range(100))
    evidence = (" ".join(long), *EVIDENCE)
    text = passage("what was the budget of inception?", "160 million", evidence)
    assert "Its budget was 160 million dollars." in text and len(text) <= PASSAGE_CHARS
    assert passage("q", "a", ()) == ""


def _page(name, body):
    return {"page_name": name, "page_url": f"https://x.example.org/{name}", "page_snippet": "",
            "page_result": f"<html><body><main><h1>{name}</h1><p>{body}</p></main></body></html>",
            "page_last_modified": ""}


ROWS = [
    {"interaction_id": "w1", "query": "who directed the film zephyrine?", "answer": "anselm quarrie", "alt_ans": [],
     "gate_case": "stated", "search_results": [_page("Zephyrine", "Zephyrine is a film directed by Anselm Quarrie. "
                                                                 "Its producer is Bettina Oxley.")]},
    {"interaction_id": "w2", "query": "when was the film corvalis released?", "answer": "2001-03-04",
     "alt_ans": ["march 4, 2001"], "gate_case": "stated",
     "search_results": [_page("Corvalis", "Corvalis was released on March 4, 2001. It was filmed in 1999.")]},
    {"interaction_id": "w3", "query": "who directed the film tarnby?", "answer": "odile fenwick", "alt_ans": [],
     "gate_case": "absent", "search_results": [_page("Tarnby", "Tarnby stars Marcus Pell and Ivy Dunmore.")]},
]


def test_examples_come_from_the_pages_with_one_error_per_right_candidate_and_rebuild_identically():
    examples = build(ROWS)
    assert rows_text(build(ROWS)) == rows_text(examples)
    rights = [e for e in examples if e.label == 1]
    assert {(e.group, e.answer) for e in rights} == {("web:w1", "anselm quarrie"), ("web:w2", "march 4, 2001")}
    assert all(e.origin == "stated" and e.answer.lower() in e.passage.lower() for e in rights)
    absent = [e for e in examples if e.origin == "absent"]
    assert [e.answer for e in absent] in (["Marcus Pell"], ["Ivy Dunmore"]) and absent[0].label == 0
    made = [e for e in examples if e.origin in ("other_entity", "changed_value", "moved_answer", "opposite_sentence")]
    assert sorted(e.group for e in made) == ["web:w1", "web:w2"] and all(e.label == 0 for e in made)
    assert {e.split for e in examples} <= {"train", "held_out"}
    assert len({e.split for e in examples if e.group == "web:w1"}) == 1  # a question stays on one side


def test_a_question_a_reported_set_asks_is_never_used():
    sample = read_jsonl(REPO_ROOT / "data/sample/crag_sample.jsonl", lambda row: row)
    asked = next(r for r in sample if r["answer"].strip() and r["answer"].lower() not in ("invalid question",))
    row = {"interaction_id": "leak", "query": asked["query"], "answer": asked["answer"],
           "alt_ans": asked.get("alt_ans") or [], "gate_case": "stated",
           "search_results": [_page("Leak", f"The answer is {asked['answer']}.")]}
    assert [e for e in build([row]) if e.group == "web:leak"] == []
    assert [e for e in build([{**row, "query": "what is the color of the zephyrine award?"}])
            if e.group == "web:leak"] != []


def test_traced_candidates_are_labelled_by_the_judge(tmp_path):
    run = tmp_path / "gate_web"
    run.mkdir()
    attempt = {"pathway": "web", "chunks": [{"text": "Zephyrine is directed by Anselm Quarrie."}],
               "verifier": {"scores": {"candidate": "Anselm Quarrie", "source": "web", "claims": 2}}}
    records = [{"interaction_id": "a", "query": "who directed zephyrine?", "gold": "anselm quarrie", "alt_ans": [],
                "trace": {"attempts": [attempt, {**attempt, "pathway": "kg"}]}},
               {"interaction_id": "b", "query": "who directed corvalis?", "gold": "odile fenwick", "alt_ans": [],
                "trace": {"attempts": [attempt]}}]
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    bases = traced_bases([run], ("web",))
    assert [(b.group, b.answer, b.label) for b in bases] == [("gate_web:a", "Anselm Quarrie", 1),
                                                             ("gate_web:b", "Anselm Quarrie", 0)]
    assert bases[0].evidence == ("Zephyrine is directed by Anselm Quarrie.",)


def test_the_committed_examples_are_a_fresh_build():
    assert make_reader_data(REPO_ROOT / OUTPUT, check=True) == 0, \
        f"{OUTPUT} differs from a build of {WEB_QUESTIONS}: run python scripts/make_reader_data.py"


def test_no_committed_example_asks_a_question_of_a_reported_set():
    from training.gate.held_out import questions, sharing
    from training.reader.examples import read_examples, reported_questions

    rights = [{"id": e.group, "query": e.query, "answer": e.answer} for e in read_examples(REPO_ROOT / OUTPUT)
              if e.label == 1]
    assert rights and not sharing(questions("reader", rights), reported_questions())
