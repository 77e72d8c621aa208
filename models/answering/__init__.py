"""How answers are made from evidence and checked: the short answer step (db3), ElectricSheep's reasoning
step, and the verify step every answer passes."""
from models.answering.attempt import Attempt
from models.answering.llm_calls import generate_traced
from models.answering.reasoning import ReasoningAnswerer
from models.answering.short import AnswerSettings, ShortAnswerer
from models.answering.verify_step import VerifyStep

__all__ = ["AnswerSettings", "Attempt", "ReasoningAnswerer", "ShortAnswerer", "VerifyStep", "generate_traced"]
