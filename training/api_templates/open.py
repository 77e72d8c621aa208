"""Open-domain templates: `get_open` infobox keys, and second hops through a founder or a capital."""
from __future__ import annotations

from training.api_templates.base import DomainTable, Filling, FixtureKG, low

OPEN = DomainTable("open")

# infobox key: (trained phrasings over {entity}, unseen phrasings, held out)
_KEYS = {
    "capital": (("what is the capital of {entity}", "which city is the capital of {entity}", "{entity} capital",
                 "what's the capital city of {entity}"), ("where is {entity}'s seat of government",), False),
    "population": (("what is the population of {entity}", "how many people live in {entity}", "{entity} population",
                    "what's the number of inhabitants of {entity}"), ("how populous is {entity}",), False),
    "population_estimate": (("what's the estimated population of {entity}", "{entity} population estimate",
                             "roughly how many people live in {entity}"), ("about how many residents does {entity} "
                                                                           "have",), False),
    "height": (("how tall is the {entity}", "what is the height of the {entity}", "{entity} height",
                "how high is the {entity}"), ("what does the {entity} measure from base to top",), False),
    "born": (("when was {entity} born", "what is the birth date of {entity}", "{entity} date of birth",
              "what's {entity}'s birthday"), ("on what day did {entity} come into the world",), False),
    "birth_place": (("where was {entity} born", "what is the birthplace of {entity}", "{entity} birthplace",
                     "which city was {entity} born in"), ("where does {entity} come from, by birth",), False),
    "founded": (("when was {entity} founded", "in what year was {entity} founded", "{entity} founding date",
                 "when did {entity} get started"), ("how long ago was {entity} set up, what year",), False),
    "currency": (("what currency is used in {entity}", "what is the currency of {entity}", "{entity} currency",
                  "what money do they use in {entity}"), ("what do people pay with in {entity}",), True),
    "borders": (("which countries border {entity}", "what are the neighbouring countries of {entity}",
                 "{entity} neighbors", "what countries does {entity} share a border with"),
                ("what lies on the other side of {entity}'s borders",), False),
    "largest_city": (("what is the largest city of {entity}", "which is the biggest city in {entity}",
                      "{entity} largest city", "what's the most populous city in {entity}"),
                     ("which city in {entity} has the most people",), False),
    "location": (("where is the {entity} located", "what is the location of the {entity}", "{entity} location",
                  "where can you find the {entity}"), ("in what place does the {entity} stand",), False),
    "country": (("which country is {entity} in", "what country is {entity} part of", "{entity} country",
                 "in what country is {entity}"), ("{entity} belongs to which nation",), False),
    "area_km2": (("what is the area of {entity} in square kilometers", "how big is {entity} in km2",
                  "{entity} area", "how many square km is {entity}"), ("what's the surface area of {entity}",), True),
    "state": (("which state is {entity} in", "what state is {entity} located in", "{entity} state"),
              ("{entity} is part of which us state",), False),
    "county": (("which county is {entity} in", "what county is {entity} the seat of", "{entity} county"),
               ("in what county does {entity} lie",), False),
    "official_languages": (("what is the official language of {entity}", "what languages are official in {entity}",
                            "{entity} official languages"), ("what do people officially speak in {entity}",), False),
    "time_zone": (("what time zone is {entity} in", "{entity} time zone", "which time zone does {entity} use"),
                  ("what's the local time zone in {entity}",), False),
    "nickname": (("what is the nickname of {entity}", "{entity} nickname", "what's {entity} called for short"),
                 ("what do people call {entity} informally",), False),
    "occupation": (("what does {entity} do for a living", "what is {entity}'s occupation", "{entity} occupation",
                    "what's {entity}'s job"), ("what is {entity}'s profession",), False),
    "opened": (("when did the {entity} open", "when was the {entity} opened", "{entity} opening date"),
               ("since when has the {entity} been open",), False),
    "headquarters": (("where is {entity} headquartered", "where are {entity}'s headquarters", "{entity} hq"),
                     ("where's the head office of {entity}",), False),
    "first_flight": (("when did the {entity} first fly", "{entity} first flight", "when was the first flight of the "
                      "{entity}"), ("when did the {entity} take off for the first time",), True),
    "manufacturer": (("who makes the {entity}", "who is the manufacturer of the {entity}", "{entity} manufacturer"),
                     ("which company built the {entity}",), False),
    "grand_slam_singles_titles": (("how many grand slam singles titles has {entity} won", "{entity} grand slam titles",
                                   "how many majors has {entity} won in singles"),
                                  ("what's {entity}'s count of grand slam singles wins",), False),
    "admitted_to_union": (("when was {entity} admitted to the union", "when did {entity} become a state",
                           "{entity} statehood date"), ("when did {entity} join the united states",), False),
    "highest_point": (("what is the highest point of {entity}", "{entity} highest point",
                       "what's the tallest mountain in {entity}"), ("where is the top of {entity}",), False),
    "founder": (("who founded {entity}", "who is the founder of {entity}", "{entity} founder",
                 "who started {entity}"), ("who set up {entity} in the first place",), False),
    "ceo": (("who is the ceo of {entity}", "who runs {entity}", "{entity} ceo"), ("who's in charge of {entity}",),
            False),
    "architect": (("who was the architect of the {entity}", "who designed the {entity}", "{entity} architect"),
                  ("whose plans was the {entity} built from",), False),
}


def _key(key: str):
    def fill(kg: FixtureKG):
        for name, entity in kg.open_entities.items():
            if entity["infobox"].get(key):
                yield Filling({"entity": low(name)}, (low(name),), (entity["infobox"][key],))
    return fill


for _name, (_questions, _unseen, _held) in _KEYS.items():
    OPEN.template('get_open("{entity}")["' + _name + '"]', *_questions, unseen=_unseen, heldout=_held,
                  name=f"open_{_name}")(_key(_name))


def _second_hop(first: str, second: str):
    def fill(kg: FixtureKG):
        for name, entity in kg.open_entities.items():
            via = entity["infobox"].get(first)
            answer = kg.open_entities.get(via or "", {}).get("infobox", {}).get(second)
            if answer:
                yield Filling({"entity": low(name)}, (low(name),), (answer,))
    return fill


OPEN.template('get_open("{entity}")["founder"]\nget_open(*)["birth_place"]',
              "where was the founder of {entity} born", "what is the birthplace of the person who founded {entity}",
              "the guy who founded {entity}, where was he born", "birthplace of {entity}'s founder",
              unseen=("in which city was whoever started {entity} born",),
              name="open_founder_birthplace")(_second_hop("founder", "birth_place"))
OPEN.template('get_open("{entity}")["founder"]\nget_open(*)["born"]',
              "when was the founder of {entity} born", "how old is the founder of {entity}, when was he born",
              "birthday of the person who founded {entity}", "{entity} founder date of birth",
              unseen=("what's the birth date of whoever started {entity}",), heldout=True,
              name="open_founder_born")(_second_hop("founder", "born"))
OPEN.template('get_open("{entity}")["capital"]\nget_open(*)["population"]',
              "what is the population of the capital of {entity}",
              "how many people live in the capital city of {entity}",
              "{entity}'s capital, how many people live there", "population of {entity}'s capital",
              unseen=("how big is the population of the city that is {entity}'s capital",), heldout=True,
              name="open_capital_population")(_second_hop("capital", "population"))
OPEN.template('get_open("{entity}")["capital"]\nget_open(*)["country"]',
              "which country is the capital of {entity} in", "the capital of {entity} is in what country",
              "country of {entity}'s capital",
              unseen=("in what nation does the capital of {entity} lie",),
              name="open_capital_country")(_second_hop("capital", "country"))
OPEN.template('get_open("{entity}")["largest_city"]\nget_open(*)["population"]',
              "how many people live in the largest city of {entity}",
              "what is the population of {entity}'s biggest city",
              "{entity}'s largest city, what's its population",
              unseen=("how populous is the biggest city in {entity}",),
              name="open_largest_city_population")(_second_hop("largest_city", "population"))
