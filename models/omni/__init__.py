"""OmniRetrieval's mode (the OmniRetrieval paper; `pipeline.mode: omni`): source selection over the sources' descriptors, then
evidence selection across every engaged source. The sources themselves are the Source seam's (models/sources/)."""
from models.omni.config import EvidenceSelectionConfig, OmniConfig, SourceSelectionConfig
from models.omni.consolidate import Consolidated, EvidenceSelector, Exact
from models.omni.selection import (EmbeddingSourceSelector, LLMSourceSelector, SourceChoice, SourceSelector,
                                   make_source_selector)

__all__ = ["Consolidated", "EmbeddingSourceSelector", "EvidenceSelectionConfig", "EvidenceSelector", "Exact",
           "LLMSourceSelector", "OmniConfig", "SourceChoice", "SourceSelectionConfig", "SourceSelector",
           "make_source_selector"]
