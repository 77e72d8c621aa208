"""The local CRAG mock-API server (Tasks 2-3 of `local_evaluation.py` and the tests; the grader never imports it).

`server` assembles one FastAPI app from one module per domain (`open`, `movie`, `finance`, `music`, `sports`),
each loading its files from the official `cragkg/` layout (`layout`) and describing its routes (`routes`, with
the BM25 name `search`); `bundled_kg` builds the small fixture KG of `data/kg_fixture/` into that layout.
Serve it with `python scripts/serve_mock_api.py`."""
from mock_api.finance import FinanceKG
from mock_api.layout import KGDataError
from mock_api.movie import MovieKG
from mock_api.music import MusicKG
from mock_api.open import OpenKG
from mock_api.search import normalize
from mock_api.sports import SportsKG

DOMAIN_KGS = (OpenKG, MovieKG, FinanceKG, MusicKG, SportsKG)

__all__ = ["DOMAIN_KGS", "FinanceKG", "KGDataError", "MovieKG", "MusicKG", "OpenKG", "SportsKG", "normalize"]
