"""Choice, yes/no and count answers computed from the evidence in code (models/verify/checkable.py).

Every case here is written for these tests (none is a question of the bundled samples or the dev set), each
class with its traps: a year beside a count, an ordinal, a price, one option's value missing, a sentence naming
both options, a negation, a value written before the option it is not about, a namesake ("Michael B. Jordan").
"""
import pytest

from models.pathways import named
from models.verify import Candidate, SupportVerifier, VerifierConfig
from models.verify.checkable import check_choice, check_count, check_yes_no
from models.verify.stated_values import dates_in, quantities_in


# ---------------------------------------------------------------------------------------------- choice
def test_dates_compared_from_structured_facts():
    facts = ["The release_date of The Host is 2006-07-27.", "The release_date of Parasite is 2019-05-30."]
    result = check_choice("which film premiered first, parasite or the host?", facts, facts=2)
    assert result.answer == "the host"
    assert result.trace["options"]["parasite"]["value"] == "2019-05-30" and "first" in result.trace["comparison"]


def test_numbers_compared_with_their_scale():
    facts = ["The market_cap of NVDA is 2,150,000,000,000 (about 2.15 trillion).",
             "The market_cap of AMZN is 1,800,000,000,000 (about 1.8 trillion)."]
    assert check_choice("which company has a smaller market cap, nvda or amzn?", facts, 2).answer == "amzn"
    text = ["The Danube is 2,850 km long.", "The Rhine flows for 1,230 km through six countries."]
    assert check_choice("which river is longer, the danube or the rhine?", text).answer == "the danube"
    assert [v for v, _ in quantities_in("cap of $1.5T and 320 m, in 1999")] == [1.5e12, 320.0]


def test_a_missing_value_or_a_shared_sentence_is_no_answer():
    one = ["The Danube is 2,850 km long.", "The Rhine is a river in Europe."]
    result = check_choice("which river is longer, the danube or the rhine?", one)
    assert result.answer == "" and "'the rhine'" in result.reason and result.trace["options"]["the rhine"] is None
    both = ["The Danube (2,850 km) is longer than the Rhine (1,230 km)."]  # whose number is whose?
    assert check_choice("which river is longer, the danube or the rhine?", both).answer == ""


def test_a_value_written_before_the_option_is_not_its_value():
    text = ["Tokyo Tower is 333 metres tall, three metres taller than the Eiffel Tower.",
            "The Space Needle is 184 m tall."]
    result = check_choice("which is taller, the eiffel tower or the space needle?", text)
    assert result.answer == ""  # Tokyo's 333 m is not the Eiffel Tower's


def test_equal_values_answer_nothing():
    facts = ["The height of Tower A is 100 m.", "The height of Tower B is 100 m."]
    assert check_choice("which is taller, tower a or tower b?", facts, 2).answer == ""


def test_a_choice_without_a_comparative_is_the_option_the_evidence_states():
    text = ["Pixar has been a subsidiary of The Walt Disney Company since 2006.",
            "Pixar was never owned by Sony, which distributed none of its films."]
    result = check_choice("is pixar owned by disney or sony?", text)
    assert result.answer == "disney" and "subsidiary" in result.trace["stated"]["disney"]
    both = text[:1] + ["Pixar is owned by Sony Pictures."]
    assert check_choice("is pixar owned by disney or sony?", both).answer == ""
    assert check_choice("is pixar owned by disney or sony?", ["Pixar makes films."]).answer == ""


# ---------------------------------------------------------------------------------------------- yes/no
def test_yes_when_a_sentence_states_the_fact_no_when_it_is_negated():
    result = check_yes_no("did the beatles release abbey road?",
                          ["Abbey Road is the eleventh studio album released by the Beatles in 1969."])
    assert result.answer == "yes" and "Abbey Road" in result.trace["sentences"]["yes"]
    assert check_yes_no("does venus have any moons?", ["Venus has no moons and no rings."]).answer == "no"


def test_no_stated_fact_or_a_contradiction_is_no_answer():
    assert check_yes_no("did the beatles release abbey road?", ["The Beatles were a band."]).answer == ""
    both = ["Venus has no moons.", "Venus has moons, some say."]
    assert check_yes_no("does venus have moons?", both).answer == ""


def test_a_namesake_does_not_state_the_fact():
    assert check_yes_no("did michael jordan star in creed?",
                        ["Michael B. Jordan starred in Creed, a boxing film."]).answer == ""
    assert check_yes_no("did michael jordan star in space jam?",
                        ["Michael Jordan starred in Space Jam in 1996."]).answer == "yes"


# ---------------------------------------------------------------------------------------------- count
def test_a_listed_value_is_counted():
    assert check_count("how many members does the band quill have?", [], listed="Ann Lee, Bo Diaz and Cy Moe").answer \
        == "3"
    facts = ["The members of Quill are Ann Lee, Bo Diaz, Cy Moe and Di Ray."]
    assert check_count("how many members are in the band quill?", facts, facts=1).answer == "4"


def test_matching_records_are_counted_and_a_year_in_them_is_not_the_count():
    """The trap: every record begins "the 72nd Academy Awards, held in 2000"; the count is the wins."""
    records = [f"The award is the 72nd Academy Awards, held in 2000 for films of 1999. The Oscar category is "
               f"{category}. The nominee ({outcome}) is Jane Roe. The film is Far Shore."
               for category, outcome in (("sound", "won"), ("editing", "won"), ("score", "won"),
                                         ("directing", "did not win"))]
    records.append("The award is the 72nd Academy Awards, held in 2000. The Oscar category is song. "
                   "The nominee (won) is Sam Poe. The film is Far Shore.")
    result = check_count("how many oscars did jane roe win at the 72nd academy awards?", records, facts=5)
    assert result.answer == "3" and len(result.trace["records"]) == 3


def test_a_count_stated_with_the_counted_noun():
    text = ["In 2023 astronomers said Jupiter has 95 known moons.", "Saturn has 146 moons."]
    result = check_count("how many moons does jupiter have?", text)
    assert result.answer == "95" and result.trace["stated"][0]["evidence"] == 0


@pytest.mark.parametrize("text", [
    "Jupiter was visited by Juno in 2016 and its moons were imaged.",  # a year beside the noun
    "Jupiter is the 5th planet; its 4 large moons and $2 postcards of moons sell well.",
])
def test_years_ordinals_and_prices_are_not_counts(text):
    result = check_count("how many large moons does jupiter have?", [text])
    assert result.answer in ("", "4") and result.answer != "2016" and result.answer != "5"


def test_different_stated_counts_or_none_answer_nothing():
    conflicting = ["Jupiter has 92 moons.", "Jupiter has 95 moons now."]
    assert check_count("how many moons does jupiter have?", conflicting).answer == ""
    assert check_count("how many moons does jupiter have?", ["Jupiter is large."]).answer == ""


# ---------------------------------------------------------------------------------------------- in the verifier
def _verify(query, answer, evidence, source="web", facts=0, **config):
    return SupportVerifier(VerifierConfig(**config)).verify([Candidate(query, answer, tuple(evidence),
                                                                       named(source), facts=facts)])[0]


def test_the_verifier_answers_a_choice_from_the_kg_facts_not_the_program_value():
    facts = ["The height of Burj Khalifa is 828 m.", "The height of Shanghai Tower is 632 m."]
    decision = _verify("which is taller, burj khalifa or shanghai tower?", "632 m", facts, source="kg-direct")
    assert (decision.answer, decision.accepted) == ("burj khalifa", True)
    assert decision.scores["computed"]["options"]["shanghai tower"]["value"] == "632 m"


def test_the_verifier_replaces_a_count_that_is_a_year():
    records = ["The award is the 72nd Academy Awards, held in 2000. The nominee (won) is Jane Roe.",
               "The award is the 72nd Academy Awards, held in 2000. The nominee (won) is Jane Roe for editing."]
    decision = _verify("how many oscars did jane roe win at the 72nd academy awards?", "Jane Roe won 2000.", records,
                       facts=2)
    assert decision.answer == "2" and decision.scores["model_answer"] == "Jane Roe won 2000."


def test_a_model_yes_without_a_stated_fact_is_refused_and_the_switch_turns_it_off():
    decision = _verify("is the river thames longer than the seine?", "Yes.", ["The Thames is in England."])
    assert not decision.accepted and "no evidence sentence states" in decision.reason
    off = _verify("is the river thames longer than the seine?", "Yes.", ["The Thames is in England."],
                  computed_answers=False)
    assert "computed" not in off.scores


def test_dates_are_read_in_every_written_form():
    assert [str(d) for d, _ in dates_in("March 30, 1999; 15 October 1999; 1999-11-12")] == [
        "1999-11-12", "1999-03-30", "1999-10-15"]
    assert [str(d) for d, _ in dates_in("founded in 1912")] == ["1912-01-01"]


def test_a_stated_count_keeps_its_scale_and_thousands():
    assert check_count("how many people live in lagos?", ["Lagos is home to 15 million people."]).answer == "15 million"
    assert check_count("how many employees does acme have?", ["Acme has 1,200 employees."]).answer == "1,200"


def test_a_count_of_something_else_or_of_another_deed_is_not_the_count():
    ballon = ["Lionel Messi has won a record eight Ballon d'Or awards."]
    assert check_count("how many nba mvp awards has lionel messi won?", ballon).answer == ""
    cut = ["At the Masters Jon Vale has missed the cut four times and has won it twice."]
    result = check_count("how many times has jon vale won the masters?", cut)
    assert result.answer == ""  # "four times" counts the missed cuts; "twice" is no number we read
    assert check_count("how many times has jon vale won the masters?",
                       ["Jon Vale has won the Masters three times."]).answer == "3"
    titles = ["Novak Vale has won 24 Grand Slam men's singles titles."]
    assert check_count("how many grand slam singles titles has novak vale won?", titles).answer == "24"


def test_a_difference_or_sum_is_computed_from_both_values_or_refused():
    from models.verify.checkable import check_arithmetic

    facts = ["The height of Burj Khalifa is 828 m.", "The height of Shanghai Tower is 632 m."]
    diff = check_arithmetic("what is the difference in height between burj khalifa and shanghai tower?", facts, 2)
    assert diff.answer == "196" and diff.trace["computation"] == "828 m - 632 m = 196"
    caps = ["The market_cap of NVDA is 2,150,000,000,000 (about 2.15 trillion).",
            "The market_cap of AMZN is 1,800,000,000,000 (about 1.8 trillion)."]
    assert check_arithmetic("what is the combined market cap of nvda and amzn?", caps, 2).answer == "3.95 trillion"
    assert check_arithmetic("how much taller is burj khalifa than shanghai tower?", facts, 2).answer == "196"
    missing = check_arithmetic("what is the difference in height between burj khalifa and big ben?", facts, 2)
    assert missing.answer == "" and "'big ben'" in missing.reason


def test_unseen_acceptance_traps_a_kg_value_is_no_yes_and_quantities_are_not_counted():
    """Two faults the acceptance set (data/acceptance/checkable.jsonl) found: a KG value returned as the answer
    to a yes/no question, and a KG list of goals per match counted as if it listed goals."""
    facts = ["The director of The Dark Knight is Christopher Nolan."]
    decision = _verify("was the dark knight directed by jonathan nolan?", "Christopher Nolan", facts,
                       source="kg-direct")
    assert decision.answer == "i don't know" and not decision.accepted
    assert check_count("how many goals did arsenal score in march 2024?", [], listed="6, 2").answer == ""


def test_one_attribute_value_is_no_record_to_count():
    # the KG wordings' acceptance set: "how many fans ..." was answered 1, the number of KG value statements
    computed = check_count("how many fans attended arsenal's home game against brentford on march 9, 2024?",
                           ["The GF of Arsenal vs Brentford on 2024-03-09 is 2."], facts=1)
    assert computed.answer == ""
