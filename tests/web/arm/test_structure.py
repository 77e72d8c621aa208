"""Compatibility (units, values, the three kinds of pair), drafts and their expansion, the verifiers, voting and
the set selector, with the hashing embedder."""
import numpy as np
import pytest
from lark import Lark

from models.deadline import Deadline
from models.types import Chunk
from models.web.arm.alignment import Alignment
from models.web.arm.config import StructureConfig
from models.web.arm.drafts import expand, make_drafts
from models.web.arm.object_sets import ObjectSetSelector, Ranked
from models.web.arm.structure import Compatibility, sentence_values, units_of
from models.web.arm.verification import (Case, IdLanguage, LlmVerifier, SupportVerifier, Vote, aggregate,
                                         make_verifier, support)
from tests.stand_ins import ServesAnyAdapter

MARGINS = "Page name: High margin\n| Company | Margin |\n| --- | --- |\n| P&G Co. | 6.7% |\n| Costco | 5.9% |"
MARGINS_2 = "Page name: More margin\n| Company | Margin |\n| --- | --- |\n| Costco | 5.9% |\n| Target | 6.3% |"
OBJECTS = [
    Chunk("Tony Fadell founded Nest Labs in 2010. The brand sells thermostats.", "u1", "text"),
    Chunk("Nest Labs by Tony Fadell is worth 3 billion. Michael Dell sold Dell shares.", "u2", "text"),
    Chunk("Boil the pasta for ten minutes. Add salt to the water.", "u3", "text"),
    Chunk(MARGINS, "u4", "table"),
    Chunk(MARGINS_2, "u5", "table"),
    Chunk("P&G Co. raised its margin again this year.", "u6", "text"),
]


class CountingEmbed:
    def __init__(self, embedder):
        self.embedder, self.calls = embedder, []

    def __call__(self, texts):
        self.calls.append(list(texts))
        return self.embedder.encode(list(texts))


def test_units_split_passages_into_sentences_and_tables_into_rows_and_columns():
    passage = units_of(OBJECTS[0])
    assert passage.texts == ("Tony Fadell founded Nest Labs in 2010.", "The brand sells thermostats.")
    assert passage.values[0] == {"tony", "fadell", "nest", "labs", "2010"} and not passage.is_table
    table = units_of(OBJECTS[3])
    assert table.texts == ("P&G Co. | 6.7%", "Costco | 5.9%") and table.headers == ("Company", "Margin")
    assert table.columns[0] == {"p&g co", "costco"}
    assert sentence_values("the brand grew 30 percent") == {"30"}


def test_shared_entities_connect_and_unrelated_objects_do_not(hashing_embedder):
    embed = CountingEmbed(hashing_embedder)
    c = Compatibility(OBJECTS, embed)
    assert len(embed.calls) == 1  # every unit and header in one call
    m = c.matrix
    assert m.shape == (6, 6) and np.allclose(m, m.T) and np.all(np.diag(m) == 0)
    assert m[0, 1] > m[0, 2] and m[0, 1] > 0.5  # Tony Fadell / Nest Labs in both
    assert m[3, 5] > m[2, 5]  # the P&G row and the P&G sentence (table-passage)
    assert m[3, 4] > 0.5  # same header, Costco in both columns (table-table)
    link = c.link(0, 1)
    assert {"fadell", "tony"} <= set(link.shared) and "connects with" in link.describe("[1]", "[2]")
    columns = c.link(3, 4)
    assert columns.left == "column Company" and "costco" in columns.shared


def test_a_sentence_repeated_by_overlapping_chunks_is_not_a_connection(hashing_embedder):
    first = Chunk("Gamma Ltd makes widgets. Beta Corp buys them from Alpha Corp.", "u", "text")
    overlap = Chunk("Beta Corp buys them from Alpha Corp. The weather was mild.", "u", "text")
    c = Compatibility([first, overlap], CountingEmbed(hashing_embedder))
    assert c.matrix[0, 1] < 0.3  # not 1.0: the shared sentence is one text seen twice


def test_only_max_units_per_object_are_embedded(hashing_embedder):
    long = Chunk(" ".join(f"Sentence {i} names Company{i}." for i in range(20)), "u", "text")
    embed = CountingEmbed(hashing_embedder)
    c = Compatibility([long, OBJECTS[0]], embed, max_units=3)
    assert len(embed.calls[0]) == 3 + 2
    assert len(c.units[0].texts) == 20 and np.all(c.vectors[c.unit_indices(0)][3:] == 0)


def test_empty_and_unit_less_objects(hashing_embedder):
    c = Compatibility([], CountingEmbed(hashing_embedder))
    assert c.matrix.shape == (0, 0)
    header_only = Chunk("Page name: x\n| a | b |\n| --- | --- |", "u", "table")
    c = Compatibility([header_only, OBJECTS[0], Chunk("", "u", "text")], CountingEmbed(hashing_embedder))
    assert c.matrix.shape == (3, 3) and c.link(0, 1).score == 0.0


def test_expansion_adds_each_new_objects_most_compatible_partners():
    m = np.zeros((5, 5))
    m[0, 1] = m[1, 0] = 0.9
    m[1, 2] = m[2, 1] = 0.8
    m[0, 3] = m[3, 0] = 0.1
    assert expand([0], m, 0, 1) == [0]
    assert expand([0], m, 1, 1) == [0, 1]
    assert expand([0], m, 2, 1) == [0, 1, 2]
    assert expand([0], m, 2, 5) == [0, 1, 3, 2]
    assert expand([4], m, 3, 2) == [4]  # no positive partner: nothing added


def test_drafts_one_per_step_and_serialised_with_links(hashing_embedder):
    c = Compatibility(OBJECTS, CountingEmbed(hashing_embedder))
    relevance = np.array([0.9, 0.2, 0.5, 0.1, 0.1, 0.1])
    drafts = make_drafts(relevance, c, base_size=2, steps=(0, 1), per_step=1, k=2, time_limit=1.0)
    assert [d.step for d in drafts] == [0, 1]
    assert drafts[0].candidates == [0, 2] and drafts[0].selection.status == "all"
    assert 1 in drafts[1].candidates and set(drafts[1].objects) == {0, 1}  # Fadell's partner beats the pasta
    question = hashing_embedder.encode(["which brand did Tony Fadell found"])[0]
    text = drafts[1].serialise(c, [o.source for o in OBJECTS], question, rows=1)
    lines = text.split("\n")
    assert lines[0] == "[1] u1" and lines[2] == "[2] u2" and "connects with" in lines[-1]
    assert sum(line.startswith("  ") for line in lines) == 2  # one unit per object


def test_id_language_is_exactly_the_drafts_ids():
    language = IdLanguage(3)
    assert language.is_valid_prefix("") and language.is_valid_prefix("1, ") and language.is_valid_prefix("2, 3")
    assert not language.is_valid_prefix("4") and not language.is_valid_prefix("1, 2, 3, ")
    assert language.is_complete("3, 1") and not language.is_complete("1,")
    parser = Lark(language.grammar, start="start")
    parser.parse("1, 3")
    with pytest.raises(Exception):
        parser.parse("4")
    assert language.parse("2, 2, 9, 1") == [1, 0]
    with pytest.raises(ValueError):
        IdLanguage(0)


def test_support_counts_keywords_by_stem():
    keywords = (Alignment("companies"), Alignment("profit margin", ("margins",)))
    assert support("The company keeps a margin of 6%.", keywords) == 1.0
    assert support("Boil pasta.", keywords) == 0.0 and support("anything", ()) == 0.0


def case(draft, texts, relevance, keywords=()):
    return Case("q", tuple(draft), texts, np.asarray(relevance, dtype=float), keywords, "Sources:\n[1] a")


def test_support_verifier_names_supporting_objects_or_the_best_one():
    keywords = (Alignment("profit"), Alignment("company"))
    texts = ["profit company", "profit only", "pasta"]
    votes = SupportVerifier(0.75).verify([case([0, 1, 2], texts, [1, 1, 1], keywords),
                                          case([1, 2], texts, [1, 1, 1], keywords)])
    assert votes[0] == Vote((0,), (1.0,)) and votes[1] == Vote((1,), (0.5,))


class IdGenerator(ServesAnyAdapter):
    def __init__(self, text=None, fail=False):
        self.text, self.fail, self.requests = text, fail, []

    def generate(self, requests, deadline=None):
        if self.fail:
            raise RuntimeError("down")
        self.requests.extend(requests)
        return [self.text or r.constraint.grammar.split("ID: ")[1].split(" | ")[-1].strip().strip('"')
                for r in requests]


def test_llm_verifier_batches_drafts_and_keeps_only_their_ids(caplog):
    generator = IdGenerator()
    verifier = LlmVerifier(generator)
    texts = ["a", "b", "c"]
    votes = verifier.verify([case([2, 0], texts, [0.1, 0.2, 0.3]), case([], texts, [0, 0, 0]),
                             case([1], texts, [0.1, 0.2, 0.3])])
    assert len(generator.requests) == 2  # the empty draft is not asked
    assert votes[0] == Vote((0,), (0.1,)) and votes[1] == Vote() and votes[2] == Vote((1,), (0.2,))
    assert "Question: q" in generator.requests[0].messages[-1]["content"]
    assert LlmVerifier(IdGenerator("7, 1")).verify([case([2], texts, [0, 0, 1])])[0] == Vote((2,), (1.0,))
    assert LlmVerifier(IdGenerator(fail=True)).verify([case([2], texts, [0, 0, 1])]) == [Vote()]


class SampledIdGenerator(ServesAnyAdapter):
    """Returns each request's n completions ("1", "1, 2", ...) with token log-probabilities."""

    def __init__(self, texts_and_logprobs):
        self.texts_and_logprobs, self.requests = texts_and_logprobs, []

    def generate(self, requests, deadline=None):
        from models.isolation import ItemResults
        from models.llm.generator import Completion

        self.requests.extend(requests)
        completions = {i: tuple(Completion(t, lp) for t, lp in self.texts_and_logprobs[:r.n])
                       for i, r in enumerate(requests)}
        return ItemResults([c[0].text for c in completions.values()], {}, completions)


def test_llm_verifier_votes_weigh_the_models_own_confidence_and_every_sample_votes():
    texts = ["a", "b", "c"]
    generator = SampledIdGenerator([("1", (-0.1, -0.3)), ("1, 2", (-1.0, -1.0, -1.0)), ("2", ())])
    [vote] = LlmVerifier(generator).verify([case([2, 0], texts, [0.1, 0.2, 0.3])])
    assert generator.requests[0].logprobs and generator.requests[0].n == 1
    assert vote == Vote((2,), (pytest.approx(np.exp(-0.2)),))  # exp(mean log-prob), not the relevance
    generator = SampledIdGenerator([("1", (-0.1, -0.3)), ("1, 2", (-1.0, -1.0, -1.0)), ("2", ())])
    [vote] = LlmVerifier(generator, samples=3, temperature=0.9).verify([case([2, 0], texts, [0.1, 0.2, 0.3])])
    assert generator.requests[0].n == 3 and generator.requests[0].temperature == 0.9
    assert vote.named == (2, 2, 0, 0)  # three completions, four namings: object 2 twice, object 0 twice
    assert vote.weights[:3] == pytest.approx((np.exp(-0.2), np.exp(-1.0), np.exp(-1.0)))
    assert vote.weights[3] == 0.1  # no log-probabilities for that completion: the object's relevance
    with pytest.raises(ValueError, match="verify_samples"):
        LlmVerifier(generator, samples=0)


def test_make_verifier():
    assert isinstance(make_verifier(StructureConfig()), SupportVerifier)
    assert isinstance(make_verifier(StructureConfig(verifier="llm"), IdGenerator()), LlmVerifier)
    with pytest.raises(ValueError, match="needs the LLM"):
        make_verifier(StructureConfig(verifier="llm"))
    with pytest.raises(ValueError, match="unknown"):
        make_verifier(StructureConfig(verifier="oracle"))


def test_aggregate_is_the_weighted_sum_of_mean_weight_and_softmax_count():
    votes = [Vote((1, 2), (0.5, 1.0)), Vote((1,), (1.0,)), Vote()]
    ranked = aggregate(votes, vote_weight=0.5)
    share_1 = np.exp(2) / (np.exp(2) + np.exp(1))
    assert ranked[0][0] == 1 and ranked[0][1] == pytest.approx(0.5 * 0.75 + 0.5 * share_1)
    assert ranked[1][1] == pytest.approx(0.5 * 1.0 + 0.5 * (1 - share_1))
    assert aggregate([Vote()]) == []


def ranked(objects=OBJECTS, relevance=(0.9, 0.2, 0.5, 0.1, 0.1, 0.3), vector=None):
    return Ranked("who founded Nest Labs", objects, [o.source for o in objects], [o.text for o in objects],
                  np.asarray(relevance, dtype=float), (Alignment("nest labs"), Alignment("founded")), vector)


def test_the_selector_votes_over_drafts_and_traces_them(hashing_embedder):
    cfg = StructureConfig(enabled=True, pool=6, base_objects=2, expansion_steps=(0, 1), per_step=1, k=2)
    selector = ObjectSetSelector(cfg, make_verifier(cfg))
    choice = selector.choose([ranked()], CountingEmbed(hashing_embedder), top=3)[0]
    assert choice.chosen[0] == 0 and 1 in choice.chosen and len(choice.chosen) == 3
    trace = choice.trace
    assert trace["pool"] == 6 and len(trace["drafts"]) == 2
    assert {"step", "chosen", "links", "status", "solve_ms", "vote"} <= set(trace["drafts"][1])
    assert trace["confidence"][0][0] == 0 and trace["chosen"] == choice.chosen


def test_the_selector_with_the_llm_verifier_renders_each_draft(hashing_embedder):
    cfg = StructureConfig(enabled=True, pool=6, base_objects=3, expansion_steps=(0,), k=2, verifier="llm")
    generator = IdGenerator("2")
    selector = ObjectSetSelector(cfg, make_verifier(cfg, generator))
    vector = hashing_embedder.encode(["who founded Nest Labs"])[0]
    choice = selector.choose([ranked(vector=vector)], CountingEmbed(hashing_embedder), top=2)[0]
    assert "[1] u1" in generator.requests[0].messages[-1]["content"]
    assert choice.trace["drafts"][0]["vote"][0][0] == choice.chosen[0]


def test_expired_deadline_or_no_objects_keep_the_ranking(hashing_embedder):
    selector = ObjectSetSelector(StructureConfig(enabled=True), SupportVerifier())
    late = selector.choose([ranked()], CountingEmbed(hashing_embedder), top=2, deadline=Deadline(0.0))[0]
    assert late.chosen == [0, 2] and late.trace["status"].startswith("skipped")
    empty = selector.choose([ranked(objects=[], relevance=())], CountingEmbed(hashing_embedder), top=2)[0]
    assert empty.chosen == []
