"""Importers read the published column layouts; a missing column is a clear error naming file and column."""
import shutil

import pytest

from models.paths import resolve_repo_path
from models.public_data.importers import (
    PublicDataError, import_directory, import_finance, import_grammys, import_movies, import_oscars,
)

FIXTURES = resolve_repo_path("data/public")


def by_text(records, *needles):
    return [r for r in records if all(n in r.text for n in needles)]


def test_oscar_rows_are_indexed_by_ceremony_year():
    records = list(import_oscars(FIXTURES / "the_oscar_award.csv"))
    [dujardin] = by_text(records, "Jean Dujardin")
    assert dujardin.text == ("The award is the 84th Academy Awards, held in 2012 for films of 2011. "
                             "The Oscar category is actor in a leading role. The winner is Jean Dujardin. "
                             "The film is The Artist.")
    assert (dujardin.source, dujardin.domain, dujardin.year, dujardin.winner) == ("oscar", "movie", 2012, True)
    assert dujardin.category == "actor in a leading role"
    assert set(dujardin.names) == {"Jean Dujardin", "The Artist"}
    [parasite] = [r for r in records if r.year == 2020 and r.category == "best picture" and r.winner]
    assert {"Kwak Sin Ae", "Bong Joon Ho", "Parasite"} <= set(parasite.names)
    assert "nominee (did not win) is Brad Pitt" in by_text(records, "Moneyball", "leading role")[0].text


def test_grammy_year_is_the_ceremony_year():
    records = list(import_grammys(FIXTURES / "the_grammy_awards.csv"))
    [eilish] = by_text(records, "Best New Artist", "winner is Billie Eilish")
    assert eilish.year == 2020  # the file's year 2019 is the eligibility year of the 62nd ceremony
    assert eilish.text.startswith("The award is the 62nd Annual Grammy Awards, held in 2020 for releases of 2019.")
    assert eilish.names == ("Billie Eilish",)
    [song] = by_text(records, "Song Of The Year", "Viva La Vida")
    assert "Coldplay" in song.names and "The credit line is Guy Berryman" in song.text


def test_movies_join_credits_when_present(tmp_path):
    records = list(import_movies(FIXTURES / "movies_metadata.csv", FIXTURES / "credits.csv"))
    [inception] = by_text(records, "The title is Inception.")
    assert "The release date is 2010-07-15." in inception.text
    assert "The director is Christopher Nolan." in inception.text
    assert "Leonardo DiCaprio as Dom Cobb" in inception.text
    assert "The budget is $160 million." in inception.text
    [parasite] = by_text(records, "The title is Parasite.")
    assert "The original title is 기생충." in parasite.text and "기생충" in parasite.names
    shutil.copy(FIXTURES / "movies_metadata.csv", tmp_path / "movies_metadata.csv")
    bare = list(import_movies(tmp_path / "movies_metadata.csv", tmp_path / "credits.csv"))
    assert len(bare) == len(records) and "director" not in by_text(bare, "The title is Inception.")[0].text


def test_malformed_movie_rows_are_skipped(tmp_path):
    lines = (FIXTURES / "movies_metadata.csv").read_text(encoding="utf-8").splitlines()
    shifted = "False,,0,[],,1999-10-15,,,,,,,,,,,,,,,,,,"  # the published file's rows with a date as id
    (tmp_path / "movies_metadata.csv").write_text("\n".join(lines[:3] + [shifted]) + "\n", encoding="utf-8")
    assert len(list(import_movies(tmp_path / "movies_metadata.csv"))) == 2


def test_finance_names_include_the_short_company_name():
    records = list(import_finance(FIXTURES / "finance_stats.csv"))
    [msft] = by_text(records, "MSFT")
    assert msft.text == ("The company is Microsoft Corporation. The ticker symbol is MSFT. "
                         "The market capitalization is $3.06 trillion. The EPS (earnings per share) is 11.06. "
                         "The P/E ratio is 37.02.")
    assert set(msft.names) == {"MSFT", "Microsoft Corporation", "Microsoft"}
    assert "JPMorgan Chase" in by_text(records, "JPM")[0].names
    assert "P/E" not in by_text(records, "SEATW")[0].text  # empty statistics get no sentence


@pytest.mark.parametrize("file_name, drop", [
    ("the_oscar_award.csv", "winner"),
    ("the_grammy_awards.csv", "nominee"),
    ("movies_metadata.csv", "release_date"),
    ("finance_stats.csv", "market_cap"),
])
def test_missing_column_names_file_and_column(tmp_path, file_name, drop):
    lines = (FIXTURES / file_name).read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    lines[0] = ",".join("renamed" if h == drop else h for h in header)
    (tmp_path / file_name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(PublicDataError) as error:
        list(import_directory(tmp_path))
    assert file_name in str(error.value) and repr(drop) in str(error.value)


def test_a_folder_without_known_files_is_an_error(tmp_path):
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    with pytest.raises(PublicDataError, match="none of the public-data files"):
        list(import_directory(tmp_path))
