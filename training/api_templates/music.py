"""Music templates: artists, songs, Grammys and the Billboard Hot 100."""
from __future__ import annotations

from collections import Counter
from typing import Iterator

from training.api_templates.base import DomainTable, Filling, FixtureKG, low

MUSIC = DomainTable("music")


def _artist_field(field_name: str, solo: bool | None = None):
    def fill(kg: FixtureKG):
        for name, artist in kg.artists.items():
            if solo is not None and (artist.get("members") is None) != solo:
                continue
            if artist.get(field_name):
                yield Filling({"artist": low(name)}, (low(name),), (artist[field_name],))
    return fill


MUSIC.template('get_person("{artist}")["birth_date"]',
               "when was {artist} born", "what is the birth date of {artist}", "{artist} birthday",
               "what's {artist}'s date of birth", "when's the singer {artist}'s birthday",
               unseen=("on what day was the musician {artist} born",),
               name="artist_birth_date")(_artist_field("birth_date", solo=True))
MUSIC.template('get_person("{artist}")["birth_date"]',
               "when was the band {artist} formed", "in what year did {artist} start", "when did {artist} form",
               "{artist} formation date", "when did the group {artist} get together",
               unseen=("when was {artist} founded as a band",),
               name="band_formed")(_artist_field("birth_date", solo=False))
MUSIC.template('get_person("{artist}")["birth_place"]',
               "which country is {artist} from", "where does {artist} come from", "{artist} home country",
               "what's the country of origin of {artist}", "where is {artist} from originally",
               unseen=("what nationality is {artist}",), name="artist_country")(_artist_field("country"))


def _artist_list(field_name: str, count: bool = False):
    """A fill over the artists with a non-empty list `field_name`: its items, or (`count`) their number."""
    def fill(kg: FixtureKG):
        for name, artist in kg.artists.items():
            if artist.get(field_name):
                items = artist[field_name]
                yield Filling({"artist": low(name)}, (low(name),), (len(items),) if count else tuple(items))
    return fill


MUSIC.template('get_person("{artist}")["members"]["len"]',
               "how many members does {artist} have", "how many people are in {artist}",
               "how many musicians are in the band {artist}", "{artist} number of members",
               unseen=("what's the size of the band {artist}",), name="band_size")(_artist_list("members", count=True))
MUSIC.template('get_person("{artist}")["members"]',
               "who are the members of {artist}", "who is in the band {artist}", "{artist} band members",
               "who plays in {artist}", "list the members of {artist}",
               unseen=("which musicians make up {artist}",), name="band_members")(_artist_list("members"))
MUSIC.template('get_person("{artist}")["works"]',
               "what songs has {artist} released", "list the works of {artist}", "{artist} discography",
               "what music has {artist} put out", "which songs are by {artist}",
               unseen=("name everything {artist} has recorded",), name="artist_works")(_artist_list("works"))


def _song_field(field_name: str):
    def fill(kg: FixtureKG):
        names = Counter(low(n) for n in kg.songs)
        for name, song in kg.songs.items():
            if song.get(field_name) and names[low(name)] == 1:
                yield Filling({"song": low(name)}, (low(name),), (song[field_name],))
    return fill


MUSIC.template('get_song("{song}")["author"]',
               "who wrote the song {song}", "who is the author of {song}", "{song} songwriter",
               "who's the writer of {song}", "who penned {song}",
               unseen=("whose song is {song}",), name="song_author")(_song_field("author"))
MUSIC.template('get_song("{song}")["release_date"]',
               "when was the song {song} released", "what is the release date of {song}", "{song} release date",
               "when did {song} come out", "what day was the track {song} released",
               unseen=("when was {song} first put out",), name="song_release_date")(_song_field("date"))
MUSIC.template('get_song("{song}")["release_country"]',
               "in which country was {song} first released", "where was the song {song} released",
               "{song} release country", "what country did {song} come out in",
               unseen=("where did the track {song} first come out",), heldout=True,
               name="song_country")(_song_field("country"))


@MUSIC.template('get_person("{artist}")["works"]\nget_song(*)\nsort(None, release_date)["name"][:1]',
                "what is the earliest song by {artist}", "which {artist} song came out first",
                "what was {artist}'s first song", "oldest track by {artist}",
                unseen=("what did {artist} release before anything else",), heldout=True,
                name="artist_first_song")
def _first_song(kg: FixtureKG):
    for name, artist in kg.artists.items():
        dated = [(kg.songs[w]["date"], w) for w in artist.get("works") or () if kg.songs.get(w, {}).get("date")]
        if len(dated) >= 2 and len(dated) == len(artist["works"]) and len({d for d, _ in dated}) == len(dated):
            yield Filling({"artist": low(name)}, (low(name),), (min(dated)[1],))


def _billboard_rank(column: str):
    """A fill over the chart rows: asked by rank and date, the row's `column` is both the entity and the answer."""
    def fill(kg: FixtureKG):
        for row in kg.billboard:
            yield Filling({"rank": int(row["rank"]), "date": row["date"]}, (low(row[column]),), (row[column],))
    return fill


MUSIC.template('get_billboard_rank({rank}, "{date}")["song"]',
               "which song was number {rank} on the billboard hot 100 on {date}",
               "what was at rank {rank} of the hot 100 on {date}", "hot 100 number {rank} song {date}",
               "what song was #{rank} on billboard on {date}",
               unseen=("which track held the number {rank} spot of the billboard chart dated {date}",),
               name="billboard_rank_song")(_billboard_rank("song"))
MUSIC.template('get_billboard_rank({rank}, "{date}")["artist"]',
               "who was the artist at number {rank} on the billboard hot 100 on {date}",
               "which artist had the number {rank} song on the hot 100 on {date}",
               "who was #{rank} on billboard on {date}", "artist at hot 100 rank {rank} on {date}",
               unseen=("whose song was number {rank} on the billboard chart of {date}",),
               name="billboard_rank_artist")(_billboard_rank("artist"))


def _billboard_song(column: str, cast=int):
    def fill(kg: FixtureKG):
        for row in kg.billboard:
            if row[column] not in ("", "-"):
                yield Filling({"song": low(row["song"]), "date": row["date"]}, (low(row["song"]),),
                              (cast(row[column]),))
    return fill


MUSIC.template('get_billboard_song("{song}", "{date}")["rank"]',
               "what rank was {song} on the billboard hot 100 on {date}",
               "where did {song} chart on the hot 100 of {date}", "{song} billboard position {date}",
               "what number was {song} on billboard on {date}",
               unseen=("how high was {song} on the hot 100 dated {date}",),
               name="billboard_song_rank")(_billboard_song("rank"))
MUSIC.template('get_billboard_song("{song}", "{date}")["weeks_in_chart"]',
               "how many weeks had {song} been on the hot 100 as of {date}",
               "weeks on chart for {song} on {date}", "how long had {song} been on billboard by {date}, in weeks",
               "on {date} how many weeks was {song} on the hot 100",
               unseen=("how many weeks in a row had {song} charted on {date}",),
               name="billboard_song_weeks")(_billboard_song("weeks"))
MUSIC.template('get_billboard_song("{song}", "{date}")["top_position"]',
               "what's the highest {song} reached on the hot 100 as of {date}",
               "peak position of {song} on billboard as of {date}", "how high did {song} peak on the hot 100 by {date}",
               "{song} peak chart position {date}",
               unseen=("what's the best rank {song} ever hit on billboard, as of {date}",), heldout=True,
               name="billboard_song_peak")(_billboard_song("peak"))
MUSIC.template('get_billboard_song("{song}", "{date}")["rank_last_week"]',
               "what rank was {song} the week before {date}", "where was {song} on the hot 100 the week before {date}",
               "{song} last week's position on the chart of {date}",
               "on the {date} chart, where had {song} been the previous week",
               unseen=("what was {song}'s previous-week rank on the hot 100 of {date}",),
               name="billboard_song_last_week")(_billboard_song("last_week"))


@MUSIC.template('get_grammy_song("{song}")["grammy_award_count"]',
                "how many grammys did the song {song} win", "how many grammy awards has {song} won",
                "{song} grammy wins", "number of grammys for {song}",
                unseen=("how many grammy trophies went to the track {song}",))
def _grammy_song_count(kg: FixtureKG):
    won = Counter(row["nominee"] for row in kg.grammys)
    for name in kg.songs:
        if won[name]:
            yield Filling({"song": low(name)}, (low(name),), (won[name],))


def _grammy_year(category: str):
    def fill(kg: FixtureKG):
        for row in kg.grammys:  # the API's by-year route answers null after 2019 (data/kg_fixture/README.md)
            if row["category"] == category and int(row["year"]) <= 2019:
                yield Filling({"year": int(row["year"])}, (f"grammys {row['year']}",), (row["nominee"],))
    return fill


MUSIC.template('get_grammy_year({year})["album_of_the_year"]',
               "which album won album of the year at the {year} grammys",
               "what was the grammy album of the year in {year}",
               "{year} grammy album of the year", "album of the year {year} winner",
               unseen=("what record took the grammy for album of the year in {year}",),
               name="grammy_album_of_the_year")(_grammy_year("Album Of The Year"))
MUSIC.template('get_grammy_year({year})["best_new_artist"]',
               "who won best new artist at the {year} grammys", "who was the grammy best new artist in {year}",
               "{year} best new artist grammy", "best new artist winner {year}",
               unseen=("which newcomer got the grammy for best new artist in {year}",), heldout=True,
               name="grammy_best_new_artist")(_grammy_year("Best New Artist"))
MUSIC.template('get_grammy_year({year})["song_of_the_year"]',
               "which song won song of the year at the {year} grammys",
               "what was the grammy song of the year in {year}",
               "{year} song of the year", "song of the year grammy {year}",
               unseen=("what track was named song of the year at the {year} grammy awards",),
               name="grammy_song_of_the_year")(_grammy_year("Song Of The Year"))

_GRAMMY_TEXT_COLUMNS = ("nominee", "artist", "workers")  # the columns the API's by-artist routes search


def _grammy_artists(kg: FixtureKG) -> Iterator[tuple[str, list[dict]]]:
    """(artist, the Grammy rows naming them): the API counts every text column that contains the name, so an
    artist whose name is inside another artist's name (Queen, Queen Latifah) is not asked."""
    for name in kg.artists:
        if any(name != other and name in other for other in kg.artists):
            continue
        rows = [row for row in kg.grammys if any(name in row[column] for column in _GRAMMY_TEXT_COLUMNS)]
        if rows:
            yield name, rows


@MUSIC.template('get_grammy_person("{artist}")["grammy_award_years"]',
                "in which years did {artist} win a grammy", "what years did {artist} get grammy awards",
                "{artist} grammy years", "when did {artist} win grammys",
                unseen=("list the years {artist} took home a grammy",))
def _grammy_person_years(kg: FixtureKG):
    for name, rows in _grammy_artists(kg):
        yield Filling({"artist": low(name)}, (low(name),), tuple(sorted({int(row["year"]) for row in rows})))


@MUSIC.template('get_grammy_person("{artist}")["grammy_award_count"]',
                "how many grammy awards has the artist {artist} won",
                "how many grammys does the musician {artist} have",
                "{artist} grammy count", "how many grammys has {artist} got",
                unseen=("what's {artist}'s total number of grammy wins",))
def _grammy_person_count(kg: FixtureKG):
    for name, rows in _grammy_artists(kg):  # the official count: one per column naming the artist
        count = sum(name in row[column] for row in rows for column in _GRAMMY_TEXT_COLUMNS)
        yield Filling({"artist": low(name)}, (low(name),), (count,))


def _best_new_artist_names(kg: FixtureKG) -> tuple[str, ...]:
    return tuple(dict.fromkeys(row["nominee"] for row in kg.grammys if row["category"] == "Best New Artist"))


@MUSIC.template('get_grammy_best_new_artists()["name"]',
                "which artists have won the grammy for best new artist",
                "list every winner of the best new artist grammy",
                "who are all the best new artist grammy winners", "all best new artist winners",
                unseen=("name everyone who has received the best new artist grammy",))
def _best_new_artists(kg: FixtureKG):
    yield Filling({}, ("grammy best new artists",), _best_new_artist_names(kg))


@MUSIC.template('get_grammy_best_new_artists()["len"]',
                "how many artists have won the grammy for best new artist",
                "how many best new artist grammys have been given", "number of best new artist winners",
                unseen=("how many musicians have been named best new artist at the grammys",))
def _best_new_artist_count(kg: FixtureKG):
    yield Filling({}, ("grammy best new artists",), (len(_best_new_artist_names(kg)),))
