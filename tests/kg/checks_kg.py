"""A KG with entities that appear nowhere in the package, for the program-check tests.

The bundled fixture (`data/kg_fixture/`) is copied, these entities are added to the copy, and the copy is built
into the official layout and served by the bundled mock server, so the checks meet names and wordings that
neither the generator's training data nor any other test has seen:
- a company, Quillon Robotics (QLRX), with daily prices 2024-02-26 .. 2024-03-01;
- a soccer match, Rivermouth Athletic 2-0 Oakvale United on 2024-02-17, with captains;
- a film, The Lantern Keeper (2016), and two films titled Halloween (1978, 2018);
- a place with its state: Columbus, Ohio, and Ohio.
"""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from mock_api.bundled_kg import SOURCE_DIR, build

QLRX_CLOSES = {"2024-02-26": 31.4, "2024-02-27": 32.05, "2024-02-28": 31.88, "2024-02-29": 33.12,
               "2024-03-01": 34.6}
COLUMBUS_POPULATION = "905748"
OHIO_POPULATION = "11799448"


def build_checks_kg(out_dir: Path) -> Path:
    """The fixture KG plus the entities above, built into `out_dir`/kg; returns the KG directory."""
    source = out_dir / "source"
    shutil.copytree(SOURCE_DIR, source)
    _append_csv(source / "finance" / "companies.csv", [{"Name": "Quillon Robotics Inc. Common Stock",
                                                        "Symbol": "QLRX"}])
    _append_csv(source / "finance" / "prices.csv", [
        {"ticker": "QLRX", "date": day, "open": close - 0.5, "high": close + 0.8, "low": close - 0.9, "close": close,
         "volume": 1_200_000 + i * 10_000} for i, (day, close) in enumerate(QLRX_CLOSES.items())])
    _append_csv(source / "sports" / "soccer_matches.csv", [{
        "league": "ENG-Premier League", "season": "2324", "date": "2024-02-17", "time": "15:00",
        "round": "Matchweek 25", "home": "Rivermouth Athletic", "away": "Oakvale United", "home_goals": 2, "away_goals": 0,
        "home_xg": 1.7, "away_xg": 0.6, "home_poss": 55, "attendance": 21044, "referee": "Dana Whitcombe",
        "home_captain": "Tomas Ridley", "away_captain": "Kwame Asante", "home_formation": "4-3-3",
        "away_formation": "4-4-2"}])
    movies = json.loads((source / "movie" / "movies.json").read_text())
    movies += [
        {"id": 990001, "title": "The Lantern Keeper", "release_date": "2016-09-09", "original_language": "en",
         "budget": 12000000, "revenue": 48300000, "rating": 6.9, "length": 112, "genres": ["Drama"],
         "cast": [["Odile Brannigan", "Mara Quill", 1]],
         "crew": [["Henrik Solberg", "Director"], ["Mirela Vasquez", "Original Music Composer"]]},
        {"id": 948, "title": "Halloween", "release_date": "1978-10-25", "original_language": "en", "budget": 325000,
         "revenue": 70000000, "rating": 7.6, "length": 91, "genres": ["Drama"],
         "cast": [["Jamie Lee Curtis", "Laurie Strode", 1], ["Donald Pleasence", "Dr. Sam Loomis", 2]],
         "crew": [["John Carpenter", "Director"]]},
        {"id": 424139, "title": "Halloween", "release_date": "2018-10-18", "original_language": "en",
         "budget": 10000000, "revenue": 255000000, "rating": 6.5, "length": 106, "genres": ["Drama"],
         "cast": [["Jamie Lee Curtis", "Laurie Strode", 1], ["Judy Greer", "Karen Nelson", 1]],
         "crew": [["David Gordon Green", "Director"]]},
    ]
    (source / "movie" / "movies.json").write_text(json.dumps(movies))
    persons = json.loads((source / "movie" / "persons.json").read_text())
    new_people = {"Odile Brannigan": 990101, "Henrik Solberg": 990102, "Mirela Vasquez": 990103,
                  "Jamie Lee Curtis": 990104, "Donald Pleasence": 990105, "Judy Greer": 990106,
                  "John Carpenter": 990107, "David Gordon Green": 990108}
    _add_people(persons, new_people)
    (source / "movie" / "persons.json").write_text(json.dumps(persons))
    entities = json.loads((source / "open" / "entities.json").read_text())
    entities["Columbus, Ohio"] = {
        "summary_text": "Columbus is the capital and most populous city of the U.S. state of Ohio.",
        "infobox": {"country": "United States", "state": "Ohio", "county": "Franklin County",
                    "population": COLUMBUS_POPULATION}}
    entities["Ohio"] = {"summary_text": "Ohio is a state in the Midwestern United States; its capital is Columbus.",
                        "infobox": {"country": "United States", "capital": "Columbus",
                                    "population": OHIO_POPULATION}}
    (source / "open" / "entities.json").write_text(json.dumps(entities))
    return build(out_dir / "kg", source)


def _append_csv(path: Path, rows: list[dict]) -> None:
    with open(path, newline="", encoding="utf-8") as handle:
        columns = next(csv.reader(handle))
    with open(path, "a", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in columns})


def _add_people(persons, people: dict[str, int]) -> None:
    if isinstance(persons, dict):
        for name, pid in people.items():
            persons.setdefault(name, {"id": pid, "birthday": None})
    else:
        known = {p[0] if isinstance(p, list) else p.get("name") for p in persons}
        for name, pid in people.items():
            if name not in known:
                persons.append([name, {"id": pid, "birthday": None}])
