"""How an answer came to be: its pathway, declared once, as data.

A pathway says whether an answer is a source's own value (an executed KG program's, a checked SQL statement's) or
a model's reading of a context. The verifier, the answer gate and the evaluation read that declaration, never the
shape of a name: a source's own value is checked as the KG's is because its pathway says `own_value`, not because
its name ends in "-direct".

Traces, predictions (`Answer.source`) and fitted gates (`models/gates/*.json`, as "source=<name>" features) hold
the name; `named` turns a name back into its declaration and refuses one nobody declared, so a saved trace or gate
of an unknown pathway fails with its name instead of being read as a model's answer.

The built-in pathways are declared here, so the verifier and the replays of saved traces know them without loading
any source. A new source declares its own once, in its module, and names it in its `Descriptor` and plans:

    WIKI_DIRECT = declare("wiki-direct", own_value=True, what="wiki")

Also here: what running one generated KG program can come to (`KGEvidence.outcome`), named once for the KG
pathway that sets them and the answer gate that groups by them. This module imports nothing of the package.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pathway:
    """One way an answer is made.

    Attributes:
        name: as traces, predictions and gate files spell it ("kg-direct").
        own_value: the answer is the source's own value, not a model's: the verifier checks only that it is the
            kind of answer asked for and that its evidence states it, not how well a text supports it.
        computes: the source computed the value (a count, sum or comparison in SQL): the verifier does not compute
            it again from the evidence, and a choice between the question's options is the source's comparison.
        what: the source in the verifier's reasons ("KG" value).
    """

    name: str
    own_value: bool = False
    computes: bool = False
    what: str = ""

    def __str__(self) -> str:
        return self.name


_DECLARED: dict[str, Pathway] = {}


def declare(name: str, *, own_value: bool = False, computes: bool = False, what: str = "") -> Pathway:
    """Declares the pathway `name` and returns it; declaring it again the same way returns the same pathway.

    Raises:
        ValueError: `name` is already declared otherwise (two sources would read one name two ways).
    """
    pathway = Pathway(name, own_value, computes, what)
    if own_value and not what:
        raise ValueError(f"pathway {name!r}: a source's own value needs `what` (the source, for the verifier's reasons)")
    earlier = _DECLARED.setdefault(name, pathway)
    if earlier != pathway:
        raise ValueError(f"pathway {name!r} is already declared as {earlier}, not {pathway}")
    return earlier


def named(name: str) -> Pathway:
    """The declared pathway called `name`.

    Raises:
        ValueError: nobody declared `name` (a trace or gate written with a source this process has not loaded).
    """
    try:
        return _DECLARED[name]
    except KeyError:
        raise ValueError(f"unknown answer pathway {name!r}: declared are {[p.name for p in declared()]}; a source's "
                         "pathway is declared by its module (models/pathways.py `declare`), so import it first"
                         ) from None


def declared() -> tuple[Pathway, ...]:
    """Every declared pathway, built-ins first, in declaration order (the answer gate's one-hot order)."""
    return tuple(_DECLARED.values())


# ---------------------------------------------------------------------------------------------- the built-ins
KG_DIRECT = declare("kg-direct", own_value=True, what="KG")  # an executed KG program's value
KG = declare("kg")  # the model's answer from the KG's verbalised facts
SQL_DIRECT = declare("sql-direct", own_value=True, computes=True, what="SQL")  # a checked statement's one cell
PUBLIC = declare("public")  # db3's shortcut: the model's answer from the public-data facts alone
WEB = declare("web")  # the model's answer from the public-data facts and the web pages
REASONING = declare("reasoning")  # ElectricSheep's reasoning step over every reference
OMNI = declare("omni")  # OmniRetrieval's one answer over the selected context of every source

# Where no pathway answered: not answers the verifier checks, so not declared (`named` refuses them).
FALLBACK = Pathway("fallback")  # every pathway left the question open
ERROR = Pathway("error")  # the pipeline failed for the question (models/crag_model.py)

# ---------------------------------------------------------------------------------------------- KG outcomes
class KGOutcome:
    """What running one generated KG program can come to (`KGEvidence.outcome`), for the KG pathway that sets it
    and the answer gate that groups by it (trace strings, so saved traces and gate files keep reading)."""

    EMPTY = "empty"  # no program (or "None")
    PARSE_ERROR = "parse-error"
    REFUSED = "refused"  # a program check refused it (`KGEvidence.checks`)
    API_ERROR = "api-error"
    FAILED = "failed"
    EXECUTED = "executed"
    STOPPED = "stopped"  # execution stopped early (the call budget or the deadline)
    NO_DATA = "no-data"  # it ran, and the API had nothing

    ALL = (EMPTY, PARSE_ERROR, REFUSED, API_ERROR, FAILED, EXECUTED, STOPPED, NO_DATA)
    RAN = (EXECUTED, STOPPED, NO_DATA)  # the program ran: what it found, or that it found nothing, is evidence
