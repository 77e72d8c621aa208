"""The local mock-API server's parts: one module per domain, each loading its files from the official
`cragkg/` layout and describing its routes; `models.kg.mock_server` assembles them into one FastAPI app."""
from models.kg.server.finance import FinanceKG
from models.kg.server.layout import KGDataError
from models.kg.server.movie import MovieKG
from models.kg.server.music import MusicKG
from models.kg.server.open import OpenKG
from models.kg.server.search import normalize
from models.kg.server.sports import SportsKG

DOMAIN_KGS = (OpenKG, MovieKG, FinanceKG, MusicKG, SportsKG)

__all__ = ["DOMAIN_KGS", "FinanceKG", "KGDataError", "MovieKG", "MusicKG", "OpenKG", "SportsKG", "normalize"]
