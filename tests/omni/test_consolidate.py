"""Cross-source evidence selection (the OmniRetrieval paper, section 2.4): one ranked context with provenance, conflicts settled
by agreement then preference, each decision in the trace."""
import numpy as np

from models.evidence import Evidence
from models.omni.config import EvidenceSelectionConfig
from models.omni.consolidate import EvidenceSelector, page_date, states_value
from models.types import Chunk


def ev(source, *texts, direct="", scores=None):
    scores = scores or [0.5] * len(texts)
    return Evidence(source, tuple(Chunk(t, "kg" if source == "kg" else f"https://{source}/{i}", source, s)
                                  for i, (t, s) in enumerate(zip(texts, scores))), direct)


class KeywordEmbedder:
    """Cosine = whether the item shares the question's keyword "budget" (1) or not (0)."""

    def encode(self, texts, is_query=False):
        return np.array([[1.0, 0.0] if "budget" in t.lower() else [0.0, 1.0] for t in texts])


def test_items_are_ranked_by_relevance_times_reliability_with_provenance():
    selector = EvidenceSelector(EvidenceSelectionConfig(context_k=3, min_per_source=0, page_dates=True),
                                KeywordEmbedder())
    evidence = {"web": ev("web", "the budget was 10m", "unrelated page"),
                "kg": ev("kg", "The budget of X is 10m.")}
    picked = selector.select("what was the budget", evidence, ["kg", "web"], {"https://web/0": "2024-03-01 10:00"})
    # kg (reliability 1.0) before web (0.8) at the same relevance; the page's date leads the web item
    assert [c.text for c in picked.items] == ["[kg] The budget of X is 10m.", "[web 2024-03-01] the budget was 10m",
                                              "[web] unrelated page"]
    assert [c.score for c in picked.items] == [1.0, 0.8, 0.0]
    assert picked.chosen is None and picked.exact == ()
    assert [i["kept"] for i in picked.trace["items"]] == [True, True, True]
    # by default a page's date stays out of the text (the model copies it as an answer)
    plain = EvidenceSelector(EvidenceSelectionConfig(context_k=3), KeywordEmbedder()).select(
        "what was the budget", evidence, ["kg", "web"], {"https://web/0": "2024-03-01 10:00"})
    assert plain.items[1].text == "[web] the budget was 10m"


def test_context_k_cuts_but_every_engaged_source_keeps_its_best_item():
    selector = EvidenceSelector(EvidenceSelectionConfig(context_k=2, min_per_source=1, provenance=False))
    evidence = {"web": ev("web", "w1", "w2", "w3", scores=[0.9, 0.8, 0.7]),
                "public_data": ev("public_data", "p1", scores=[0.1])}
    picked = selector.select("q", evidence, ["public_data", "web"])
    assert [c.text for c in picked.items] == ["w1", "p1"]  # without the guarantee: w1, w2
    # a source that was not engaged is not read, even if its evidence is there
    assert [c.text for c in selector.select("q", evidence, ["web"]).items] == ["w1", "w2"]


def test_an_item_stating_another_sources_exact_value_gets_the_agreement_bonus():
    selector = EvidenceSelector(EvidenceSelectionConfig(agreement_bonus=0.5, provenance=False))
    evidence = {"kg": ev("kg", "The director is Bong Joon-ho.", direct="Bong Joon-ho", scores=[0.0]),
                "web": ev("web", "directed by bong joon-ho in 2019", "a review", scores=[0.1, 0.2])}
    picked = selector.select("who directed parasite", evidence, ["kg", "web"])
    assert picked.items[0].text == "directed by bong joon-ho in 2019"
    assert picked.trace["items"][0]["agrees_with"] == ["kg"]
    assert picked.chosen.source == "kg" and picked.chosen.support == 1
    assert picked.trace["conflict"] == "" and picked.trace["chosen"] == "kg"


def test_differing_exact_values_go_to_the_one_more_items_state():
    selector = EvidenceSelector(EvidenceSelectionConfig())
    evidence = {"kg": ev("kg", "The count is 3.", direct="3"),
                "sql": ev("sql", "COUNT(*) = 4", direct="4"),
                "web": ev("web", "it won 4 oscars", "4 wins in total")}
    picked = selector.select("how many oscars", evidence, ["kg", "sql", "web"])
    assert [(e.source, e.value, e.support) for e in picked.exact] == [("kg", "3", 0), ("sql", "4", 2)]
    assert picked.chosen.source == "sql"
    assert picked.trace["conflict"].startswith("agreement: sql")


def test_a_tie_goes_to_the_preferred_source_and_agreeing_values_are_no_conflict():
    evidence = {"kg": ev("kg", "x", direct="3"), "sql": ev("sql", "y", direct="4")}
    picked = EvidenceSelector(EvidenceSelectionConfig()).select("q", evidence, ["sql", "kg"])
    assert picked.chosen.source == "kg" and picked.trace["conflict"].startswith("preference: kg")
    flipped = EvidenceSelector(EvidenceSelectionConfig(prefer=("sql", "kg"))).select("q", evidence, ["sql", "kg"])
    assert flipped.chosen.source == "sql"
    same = {"kg": ev("kg", "x", direct="The Matrix"), "sql": ev("sql", "y", direct="the matrix")}
    agreed = EvidenceSelector(EvidenceSelectionConfig()).select("q", same, ["kg", "sql"])
    assert agreed.chosen.source == "kg" and agreed.trace["conflict"] == "the sources agree"


def test_without_an_embedder_or_when_it_fails_items_keep_their_sources_scores():
    class Broken:
        def encode(self, texts, is_query=False):
            raise RuntimeError("down")

    evidence = {"web": ev("web", "low", "high", scores=[0.1, 0.9])}
    for embedder in (None, Broken()):
        picked = EvidenceSelector(EvidenceSelectionConfig(provenance=False), embedder).select("q", evidence, ["web"])
        assert [c.text for c in picked.items] == ["high", "low"]


def test_nothing_engaged_or_nothing_found_is_an_empty_selection():
    picked = EvidenceSelector(EvidenceSelectionConfig()).select("q", {"web": ev("web", "  ")}, ["web", "kg"])
    assert picked.items == () and picked.chosen is None and picked.trace["items"] == []


def test_states_value_matches_whole_phrases_only():
    assert states_value("It won 4 Oscars.", "4")
    assert not states_value("It won 14 Oscars and 4.5 stars", "4")
    assert states_value("Directed by BONG  Joon-ho.", "bong joon-ho")
    assert not states_value("anything", "")
    assert not states_value("$1,000", "1")


def test_a_sources_own_order_stands_and_cosines_only_interleave_the_sources():
    class Fixed:
        """Cosines by text: the web's second chunk is nearer the question than its first."""
        COS = {"w1": 0.2, "w2": 0.9, "k1": 0.5}

        def encode(self, texts, is_query=False):
            return np.array([[1.0, 0.0]] + [[self.COS[t], 0.0] for t in texts[1:]])

    selector = EvidenceSelector(EvidenceSelectionConfig(provenance=False, reliability={"web": 1.0, "kg": 1.0}),
                                Fixed())
    picked = selector.select("q", {"web": ev("web", "w1", "w2"), "kg": ev("kg", "k1")}, ["kg", "web"])
    assert [(c.text, c.score) for c in picked.items] == [("w1", 0.9), ("k1", 0.5), ("w2", 0.2)]


def test_page_dates_are_read_from_iso_and_rfc_2822_times():
    assert page_date(" Tue, 27 Feb 2024 22:55:55 GMT") == "2024-02-27"
    assert page_date("2024-03-01T10:00:00Z") == "2024-03-01"
    assert page_date("last week") == "" and page_date("") == ""
