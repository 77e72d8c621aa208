"""Parent/child chunking invariants."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.types import Chunk
from models.web.chunker import Chunker, Corpus, split_table

PROSE = " ".join(f"Sentence number {i} talks about the Eiffel Tower, which is 330 m tall." for i in range(40))
TABLE = "Page name: Scores\n| Date | Home | Away |\n| --- | --- | --- |\n" + "\n".join(
    f"| 2022-10-{i:02d} | Warriors {100 + i} | Lakers {90 + i} |" for i in range(1, 31))


def check_invariants(corpus: Corpus, child_size: int) -> None:
    assert len(corpus.children) == len(corpus.parent_of)
    for child, parent in zip(corpus.children, corpus.parent_of):
        assert 0 <= parent < len(corpus.parents)
        assert child and child in corpus.parents[parent].text
    assert list(corpus.parent_of) == sorted(corpus.parent_of)  # children come in parent order
    assert set(corpus.parent_of) == set(range(len(corpus.parents)))  # no parent without a child


def test_text_parents_and_children():
    corpus = Chunker(700, 100, 200, 50).split([Chunk(PROSE, "u1", "text")])
    check_invariants(corpus, 200)
    assert all(len(p.text) <= 700 for p in corpus.parents)
    assert all(len(c) <= 200 for c in corpus.children)
    assert len(corpus.parents) >= len(PROSE) // 700
    assert all(p.source == "u1" and p.kind == "text" for p in corpus.parents)
    # parents end at sentence boundaries where possible
    assert all(p.text.endswith(".") for p in corpus.parents)


@pytest.mark.parametrize("parent_size", [500, 700, 1000, 2000])
def test_db3_parent_sizes(parent_size):
    corpus = Chunker(parent_size, parent_size // 5, 200, 50).split([Chunk(PROSE * 3, "u", "text")])
    check_invariants(corpus, 200)
    assert max(len(p.text) for p in corpus.parents) <= parent_size


def test_tables_and_snippets_are_their_own_parents():
    docs = [Chunk(TABLE, "u2", "table"), Chunk("Canberra is the capital of Australia.", "u3", "snippet")]
    corpus = Chunker(table_parent_chars=10_000).split(docs)
    check_invariants(corpus, 200)
    assert [p.kind for p in corpus.parents] == ["table", "snippet"]
    assert corpus.parents[0].text == TABLE


def test_long_tables_repeat_name_and_header():
    pieces = split_table(TABLE, 300)
    assert len(pieces) > 1
    head = TABLE.split("\n")[:3]
    rows = []
    for piece in pieces:
        lines = piece.split("\n")
        assert lines[:3] == head
        assert len(piece) <= 300
        rows += lines[3:]
    assert rows == TABLE.split("\n")[3:]  # every row once, in order


def test_duplicate_parents_are_dropped_and_empty_documents_skipped():
    docs = [Chunk(PROSE, "a", "text"), Chunk(PROSE, "b", "text"), Chunk("", "c", "text"), Chunk("  ", "d", "snippet")]
    single = Chunker().split(docs[:1])
    assert Chunker().split(docs).parents == single.parents


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError, match="overlap"):
        Chunker(parent_size=100, parent_overlap=100)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab .,\n|"), max_size=900), max_size=4),
       st.integers(30, 400), st.integers(10, 120))
def test_every_child_is_inside_its_parent(texts, parent_size, child_size):
    chunker = Chunker(parent_size, parent_size // 4, child_size, child_size // 4, table_parent_chars=parent_size)
    kinds = ["text", "table", "snippet", "text"]
    corpus = chunker.split([Chunk(t, str(i), kinds[i]) for i, t in enumerate(texts)])
    check_invariants(corpus, child_size)
