"""Knowledge sources behind one interface (`base.Source`), registered by name; importing this package
registers the built-in ones: public data, its SQL, the KG, the web."""
from models.sources import kg, public_data, sql, web  # noqa: F401 - each module registers its source
from models.sources.base import (AnswerPlan, Descriptor, Source, build_sources, register_source,
                                 registered_sources)

__all__ = ["AnswerPlan", "Descriptor", "Source", "build_sources", "register_source",
           "registered_sources"]
