"""Linking an extracted name to store entities: exact, case/punctuation, substring, near miss, nothing."""
import pytest

from models.public_data import EntityLinker


@pytest.fixture(scope="module")
def linker(store, embedder):
    return EntityLinker(store, embedder, substring_min_chars=4, max_links=3, link_candidates=30,
                        embedding_threshold=0.6, fuzzy_threshold=0.85)


def first(linker, name, domain="movie"):
    links = linker.link(name, domain)
    return (links[0].name, links[0].stage) if links else None


@pytest.mark.parametrize("name, domain, expected", [
    # exact, and exact after case / punctuation / accent normalisation
    ("Inception", "movie", ("Inception", "exact")),
    ("THE MATRIX!", "movie", ("The Matrix", "exact")),
    ("the kings speech", "movie", ("The King's Speech", "exact")),
    ("renee zellweger", "movie", ("Renée Zellweger", "exact")),
    ("once upon a time in hollywood", "movie", ("Once upon a Time...in Hollywood", "exact")),
    ("msft", "finance", ("MSFT", "exact")),
    ("microsoft", "finance", ("Microsoft", "exact")),  # the name without "Corporation"
    # substring at word boundaries, covering most of the name (which ends the search)
    ("godfather part ii", "movie", ("The Godfather: Part II", "substring")),
    ("the tank and the bangas", "music", ("Tank And The Bangas", "substring")),
    # near misses: embedding cosine, or character similarity for typos
    ("godfather part two", "movie", ("The Godfather: Part II", "embedding")),
    ("harry potter deathly hallows part 2", "movie", ("Harry Potter and the Deathly Hallows: Part 2", "embedding")),
    ("the matirx", "movie", ("The Matrix", "fuzzy")),
    ("jean dujarden", "movie", ("Jean Dujardin", "fuzzy")),
    ("billy eilish", "music", ("Billie Eilish", "fuzzy")),
])
def test_links(linker, name, domain, expected):
    assert first(linker, name, domain) == expected


def test_partial_substring_also_tries_near_misses(linker):
    names = [link.name for link in linker.link("the godfather part two", "movie")]
    assert names[0] == "The Godfather: Part II" and "The Godfather" in names
    assert first(linker, "the movie fight club")[0] == "Fight Club"
    assert first(linker, "hathaway", "finance")[0] == "Berkshire Hathaway"


def test_substring_hits_are_ordered_by_closeness(store):
    links = EntityLinker(store, None).link("matrix", "movie")
    assert links[0].name == "The Matrix" and all(link.stage == "substring" for link in links)
    assert len(links) == 3  # max_links


@pytest.mark.parametrize("name, domain", [
    ("star wars", "movie"), ("the notebook", "movie"), ("avengers endgame", "movie"),
    ("inception", "finance"),  # wrong domain
    ("", "movie"), ("!!!", "movie"),
    ("heat", "movie"),  # "heat" must not link "the hurt locker" or "wheat"
])
def test_no_link_for_unknown_names(linker, name, domain):
    assert linker.link(name, domain) == []


def test_names_shorter_than_the_minimum_only_link_exactly(store):
    assert EntityLinker(store, None, substring_min_chars=4).link("club", "movie")[0].name == "Fight Club"
    assert EntityLinker(store, None, substring_min_chars=5).link("club", "movie") == []
    assert [link.stage for link in EntityLinker(store, None, substring_min_chars=5).link("Hugo", "movie")] == ["exact"]


def test_without_an_embedder_only_typos_are_near_misses(store, linker):
    assert EntityLinker(store, None).link("godfather 2", "movie") == []
    assert EntityLinker(store, None).link("the matirx", "movie")[0].stage == "fuzzy"
    assert {link.stage for link in linker.link("godfather 2", "movie")} == {"embedding"}
