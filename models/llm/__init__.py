"""The LLM layer: one `Generator` interface, a transformers+peft backend (CPU) and a vLLM backend (GPU).

Backends are imported lazily by `make_generator` (vllm only when a profile asks for it), so importing
this package never pulls torch-heavy or GPU-only modules beyond what its public names need.
"""
from models.llm.constraints import DecodingConstraint
from models.llm.errors import AdapterNotFoundError, BackendUnavailableError, LLMError, UnknownAdapterError
from models.llm.generator import Completion, GenerationRequest, Generator, completions_of, make_generator
from models.llm.postprocess import clean_answer, is_idk
from models.llm.prompts import PromptLibrary, load_prompt

__all__ = [
    "AdapterNotFoundError",
    "BackendUnavailableError",
    "Completion",
    "DecodingConstraint",
    "GenerationRequest",
    "Generator",
    "LLMError",
    "PromptLibrary",
    "UnknownAdapterError",
    "clean_answer",
    "completions_of",
    "is_idk",
    "load_prompt",
    "make_generator",
]
