"""The normal forms of models/text.py, pinned: each caller's form (the KG's, the judge's, the verifier's, ...)
kept exactly as it was when they were gathered into one module, on the same hostile strings (typographic quotes,
accents, non-Latin letters, thousands commas, ISO dates, titles). A change to one form shows here by name."""
import pytest

from models import text
from models.date_words import MONTH_NUMBERS, MONTHS, month_name, month_number

INPUTS = ['The King’s Speech (2010)', 'Beyoncé & Jay-Z', '  São_Paulo, Brasil!  ', '$1,234.50 million — 12%', '2010-07-15 was July 15th', 'Mr. John Smith Jr.', '07 apples & 3.0 pears...', 'U.S.A. vs. Ü-boot', '', 'one hundred twenty', "It's 4.5 / 5 stars", "café-au-lait's aroma", 'Œuvre straße 東京 2024']

GOLDEN = {
    'kg_match_key': ['the king s speech 2010', 'beyonce jay z', 'sao paulo brasil', '1 234 50 million 12', '2010 07 15 was july 15th', 'mr john smith jr', '07 apples 3 0 pears', 'u s a vs u boot', '', 'one hundred twenty', 'it s 4 5 5 stars', 'cafe au lait s aroma', 'œuvre straße 東京 2024'],
    'name_key': ['the kings speech 2010', 'beyonce and jay z', 'sao paulo brasil', '1 234 50 million 12', '2010 07 15 was july 15th', 'mr john smith jr', '07 apples and 3 0 pears', 'u s a vs u boot', '', 'one hundred twenty', 'its 4 5 5 stars', 'cafe au laits aroma', 'uvre stra e 2024'],
    'value_phrase': ['the king s speech 2010', 'beyoncé jay-z', 'são_paulo, brasil', '$1,234.50 million 12%', '2010-07-15 was july 15th', 'mr. john smith jr.', '07 apples 3.0 pears...', 'u.s.a. vs. ü-boot', '', 'one hundred twenty', 'it s 4.5 5 stars', 'café-au-lait s aroma', 'œuvre straße 東京 2024'],
    'checkable_words': ['the kings speech 2010', 'beyonce jay z', 'sao paulo brasil', '1234.50 million 12', '2010 7 15 july was july 15 th', 'mr john smith jr', '7 apples 3.0 pears', 'u s a vs u boot', '', '1 hundred 20', 'it s 4.5 5 stars', 'cafe au lait s aroma', 'uvre strae 2024'],
    'judge_words': ['the king s speech 2010', 'beyonc jay z', 's o paulo brasil', '1 234.50 million 12', '2010 07 15 was july 15th', 'mr john smith jr', '07 apples 3.0 pears', 'u s a vs boot', '', 'one hundred twenty', 'it s 4.5 5 stars', 'caf au lait s aroma', 'uvre stra e 2024'],
    'clean': ["the king's speech (2010)", 'beyonce & jay-z', 'sao_paulo, brasil!', '$1,234.50 million - 12%', '2010-07-15 was july 15th', 'mr. john smith jr.', '07 apples & 3.0 pears...', 'u.s.a. vs. u-boot', '', 'one hundred twenty', "it's 4.5 / 5 stars", "cafe-au-lait's aroma", 'œuvre straße 東京 2024'],
    'words': [['the', 'king', 'speech', '2010'], ['beyonce', 'jay', 'z'], ['sao', 'paulo', 'brasil'], ['1', '234.50', 'million', '12'], ['2010', '07', '15', 'was', 'july', '15th'], ['mr', 'john', 'smith', 'jr'], ['07', 'apples', '3.0', 'pears'], ['u', 's', 'a', 'vs', 'u', 'boot'], [], ['one', 'hundred', 'twenty'], ['it', '4.5', '5', 'stars'], ['cafe', 'au', 'lait', 'aroma'], ['uvre', 'stra', 'e', '2024']],
    'answer_key': ['king speech 2010', 'beyonce jay z', 'sao paulo brasil', '1 234.50 million 12', '2010 07 15 was july 15th', 'john smith', '07 apples 3.0 pears', 'u s a vs u boot', '', 'one hundred twenty', 'it 4.5 5 stars', 'cafe au lait aroma', 'uvre stra e 2024'],
    'strip_accents': ['The King’s Speech (2010)', 'Beyonce & Jay-Z', '  Sao_Paulo, Brasil!  ', '$1,234.50 million — 12%', '2010-07-15 was July 15th', 'Mr. John Smith Jr.', '07 apples & 3.0 pears...', 'U.S.A. vs. U-boot', '', 'one hundred twenty', "It's 4.5 / 5 stars", "cafe-au-lait's aroma", 'Œuvre straße 東京 2024'],
}


@pytest.mark.parametrize("form", sorted(GOLDEN))
def test_every_normal_form_is_pinned(form):
    assert [getattr(text, form)(value) for value in INPUTS] == GOLDEN[form]


def test_none_is_empty_for_the_forms_that_take_missing_text():
    for form in ("clean", "answer_key", "name_key", "value_phrase", "checkable_words", "judge_words"):
        assert getattr(text, form)(None) == "", form


def test_month_words():
    assert [month_number(w) for w in ("jan", "january", "sept", "september", "may", "mayday", "xyz", "")] == \
        [1, 1, 9, 9, 5, 5, 0, 0]
    assert month_name(7) == "july" and month_name(0) == month_name(13) == ""
    assert len(MONTHS) == 12 and MONTH_NUMBERS["sept"] == 9 and MONTH_NUMBERS["dec"] == 12
