"""ElectricSheep's answer stages (Yuan et al. 2024 §4.4, §4.6, §4.7): the LLM knowledge extractor, the reasoning
module over all references, and the backup summarizer."""
from models.reasoning.config import BackupConfig, KnowledgeConfig, ReasoningConfig
from models.reasoning.knowledge import KnowledgeExtractor
from models.reasoning.output import ParsedReasoning, ReasoningFormatError, parse_reasoning
from models.reasoning.reasoner import ReasonedAnswer, Reasoner
from models.reasoning.references import References, format_references
from models.reasoning.summarizer import BackupSummarizer

__all__ = ["BackupConfig", "BackupSummarizer", "KnowledgeConfig", "KnowledgeExtractor", "ParsedReasoning",
           "ReasonedAnswer", "Reasoner", "ReasoningConfig", "ReasoningFormatError", "References",
           "format_references", "parse_reasoning"]
