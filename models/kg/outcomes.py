"""What running one generated KG program can come to (`KGEvidence.outcome`), named once for the pathway that sets
them and the readers that group by them (the answer gate's features). Imports nothing, so a reader of the words
does not load the KG language."""

EMPTY = "empty"  # no program (or "None")
PARSE_ERROR = "parse-error"
REFUSED = "refused"  # a program check refused it (`KGEvidence.checks`)
API_ERROR = "api-error"
FAILED = "failed"
EXECUTED = "executed"
STOPPED = "stopped"  # execution stopped early (the call budget or the deadline)
NO_DATA = "no-data"  # it ran, and the API had nothing

OUTCOMES = (EMPTY, PARSE_ERROR, REFUSED, API_ERROR, FAILED, EXECUTED, STOPPED, NO_DATA)
RAN = (EXECUTED, STOPPED, NO_DATA)  # the program ran: what it found, or that it found nothing, is evidence
