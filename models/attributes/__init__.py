"""Question attributes (ElectricSheep §4.2): static vs dynamic, by a classifier or the LLM."""
from models.attributes.config import AttributeConfig
from models.attributes.data import AttributeDataError, binary_label, load_attribute_labels
from models.attributes.llm import LLMAttributePredictor
from models.attributes.predictor import AttributePredictor, load_or_train

__all__ = ["AttributeConfig", "AttributeDataError", "AttributePredictor", "LLMAttributePredictor",
           "binary_label", "load_attribute_labels", "load_or_train"]
