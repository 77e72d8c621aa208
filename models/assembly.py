"""The built-in parts of the pipeline and how each is built from the profile (registered in `models/parts.py`).

Importing this module registers them. The generator is not among them: `Pipeline.from_config` builds it first,
because vLLM forks its tensor-parallel workers and a worker forked from a process that has initialised CUDA
fails, so nothing touches CUDA before the engine exists (docs/gpu.md "g4dn start-up"). The KG pathway, public data,
the router and the grader's tokenizer are imported when built: Task 1 never imports the KG package.
"""
from __future__ import annotations

import os

from models.answering import AnswerSettings, ReasoningAnswerer, ShortAnswerer
from models.attributes import AttributePredictor
from models.calculator.tool import NumericalCalculator
from models.embedder import Embedder
from models.llm.prompts import PromptLibrary
from models.omni import EvidenceSelector, make_source_selector
from models.parts import Parts, register_part
from models.reasoning import KnowledgeExtractor, Reasoner
from models.sources import build_sources
from models.verify import SupportVerifier
from models.web import make_web_retriever


def _embedder(parts: Parts):
    c = parts.config
    return Embedder.from_config(c.embedder, c.models_dir)


def _web(parts: Parts):
    c = parts.config
    return make_web_retriever(c.web, c.models_dir, parts.get("embedder"), generator=parts.get("generator"),
                              prompts=parts.get("prompts"))


def _router(parts: Parts):
    from models.routing import make_router

    return make_router(parts.config.routing, generator=parts.get("generator"), embedder=parts.get("embedder"))


def _kg(parts: Parts):
    c = parts.config
    if not (c.pipeline.use_kg and _kg_expected(c.pipeline.task)):
        return None
    from models.kg.pathway import KGPathway

    return KGPathway.from_config(c.kg, embedder=parts.get("embedder"))


def _public_data(parts: Parts):
    c = parts.config
    if not c.pipeline.use_public_data:
        return None
    from models.public_data import PublicData

    return PublicData.from_config(c.public_data, embedder=parts.get("embedder"))


def _grader_trim(parts: Parts):
    from models.trim import load_grader_trim

    return load_grader_trim(parts.config.pipeline.grader_tokenizer or None)


def _verifier(parts: Parts):
    """One verifier for the whole pipeline (with the embedder where one was built, and the answer reader where the
    profile names one)."""
    from models.verify.reader import load_reader

    c = parts.config
    return SupportVerifier(c.verifier, embedder=parts.get("embedder"), generator=parts.get("generator"),
                           prompts=parts.get("prompts"), reader=load_reader(c.verifier, c.models_dir))


def _attributes(parts: Parts):
    c = parts.config
    if not c.attributes.enabled:
        return None
    return AttributePredictor.from_config(c.attributes, embedder=parts.get("embedder"), generator=parts.get("generator"))


def _source_selector(parts: Parts):
    c = parts.config
    if c.pipeline.mode != "omni":
        return None
    selector = make_source_selector(c.omni.selection, embedder=parts.get("embedder"), generator=parts.get("generator"),
                                    prompts=parts.get("prompts"))
    selector.warm_up()  # the example pools are embedded at start-up, not in the first graded batch
    return selector


def _evidence_selector(parts: Parts):
    return EvidenceSelector(parts.config.omni.evidence, embedder=parts.get("embedder"))


def _reasoner(parts: Parts):
    c = parts.config
    return Reasoner(c.reasoning, parts.get("generator"), parts.get("prompts")) if c.reasoning.enabled else None


def _knowledge(parts: Parts):
    c = parts.config
    if not (c.reasoning.enabled and c.reasoning.knowledge.enabled):
        return None
    return KnowledgeExtractor(c.reasoning.knowledge, parts.get("generator"), parts.get("prompts"))


def _calculator(parts: Parts):
    c = parts.config
    return NumericalCalculator(c.calculator, parts.get("generator"), parts.get("prompts")) if c.calculator.enabled \
        else None


def _answerer(parts: Parts):
    """db3's short answer step, or (`reasoning.enabled`) ElectricSheep's reasoning step around it, with its
    knowledge extractor and calculator."""
    c = parts.config
    a = c.answering
    short = ShortAnswerer(parts.get("generator"), parts.get("prompts"),
                          AnswerSettings(c.web.context_max_tokens, c.pipeline.answer_word_limit,
                                         c.pipeline.answer_max_new_tokens, a.logprobs, a.samples,
                                         a.sample_temperature), parts.get("grader_trim"))
    if c.calculator.enabled and not c.reasoning.enabled:
        raise ValueError("calculator.enabled needs reasoning.enabled: its results are references of the "
                         "reasoning step")
    if not c.reasoning.enabled:
        return short
    return ReasoningAnswerer(short, parts.get("reasoner"), c.reasoning.tasks, parts.get("knowledge"),
                             c.reasoning.knowledge.tasks, parts.get("calculator"), c.calculator.tasks)


def _sources(parts: Parts):
    return build_sources(parts.config.pipeline.sources, parts)


def _kg_expected(task: int) -> bool:
    """Whether to build the KG pathway: Tasks 2/3, or auto-detect with a mock API URL in the environment."""
    return task in (2, 3) or (task == 0 and bool(os.environ.get("CRAG_MOCK_API_URL")))


# What loads weights or data, in the order `Pipeline.from_config` used to build it; then what is composed.
for _name, _build in (("embedder", _embedder), ("web", _web), ("router", _router), ("kg", _kg),
                      ("public_data", _public_data), ("grader_trim", _grader_trim), ("attributes", _attributes),
                      ("source_selector", _source_selector)):
    register_part(_name, _build, loads=True)
for _name, _build in (("prompts", lambda parts: PromptLibrary()), ("verifier", _verifier),
                      ("evidence_selector", _evidence_selector), ("reasoner", _reasoner), ("knowledge", _knowledge),
                      ("calculator", _calculator), ("answerer", _answerer), ("sources", _sources)):
    register_part(_name, _build, loads=False)
