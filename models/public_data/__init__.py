"""The public-data pathway: Oscar / Grammy / movie metadata / finance statistics in a local SQLite store."""
from models.public_data.database import build_database, ensure_database
from models.public_data.importers import PublicDataError
from models.public_data.linker import EntityLinker, Link
from models.public_data.pathway import PublicData, parse_entities
from models.public_data.records import Record, serialize
from models.public_data.store import PublicStore

__all__ = [
    "EntityLinker",
    "Link",
    "PublicData",
    "PublicDataError",
    "PublicStore",
    "Record",
    "build_database",
    "ensure_database",
    "parse_entities",
    "serialize",
]
