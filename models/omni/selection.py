"""Source selection (the OmniRetrieval paper, section 2.2): which sources a question engages, best first.

The paper's selector is an LLM reading every source's descriptor with the question (`LLMSourceSelector`, the
g4dn way). On 2 CPU cores a 135M model cannot do that reliably, so the CPU profile scores each source by the
MiniLM cosines of the question to the source's labelled example questions and to its descriptor
(`EmbeddingSourceSelector`, the domain router's way: no LLM call). Both return a `SourceChoice` per question:
every source's score, and the engaged ones (at most `k` above `min_score`, the best always, plus `always`).
A selector that fails engages every source: selection saves time, it must never lose evidence.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence

import numpy as np

from models.jsonl import read_jsonl
from models.omni.config import SourceSelectionConfig
from models.paths import resolve_repo_path
from models.similar import embed_pool

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceChoice:
    """One question's selection.

    Attributes:
        engaged: the sources to ask, best first.
        scores: every candidate source's score (embedding: blended cosine; llm: 1.0 for the first named, less
            for later ones, 0.0 unnamed).
        how: "embedding" | "llm" | "llm, unparsed: embedding" | "failed: every source".
    """

    engaged: tuple[str, ...]
    scores: Mapping[str, float]
    how: str

    def as_trace(self) -> dict:
        return {"how": self.how, "engaged": list(self.engaged),
                "scores": {name: round(float(score), 4) for name, score in self.scores.items()}}


class SourceSelector(Protocol):
    def select(self, questions: Sequence[str], descriptors: Sequence, deadline=None,
               states: Sequence | None = None) -> list[SourceChoice]:
        """One `SourceChoice` per question, in order, choosing among `descriptors` (the batch's sources that
        run in its task, in the profile's order); `states` (the questions' `QueryState`s) get any LLM call."""


def choose(scores: Mapping[str, float], names: Sequence[str], config: SourceSelectionConfig, how: str) -> SourceChoice:
    """The engaged sources for `scores`: the top `k` scoring at least `min_score` (the best one always), then
    the `always` sources not among them; ties keep the profile's order (`names`)."""
    ranked = sorted(names, key=lambda n: (-scores.get(n, 0.0), names.index(n)))
    picked = [n for n in ranked[:max(1, config.k)] if scores.get(n, 0.0) >= config.min_score] or ranked[:1]
    picked += [n for n in names if n in config.always and n not in picked]
    return SourceChoice(tuple(picked), {n: float(scores.get(n, 0.0)) for n in names}, how)


def every_source(names: Sequence[str], why: str) -> SourceChoice:
    return SourceChoice(tuple(names), {n: 0.0 for n in names}, f"failed: every source ({why})")


def load_example_questions(paths: Sequence[str]) -> list[str]:
    """The "query" (or "question") of every line of the JSONL files at `paths` (repo-relative).

    Raises:
        ValueError: a missing file, a line that is not JSON, or a line without a question (named by file:line).
    """
    questions: list[str] = []
    for path in paths:
        try:
            questions += read_jsonl(resolve_repo_path(path), _example_question)
        except OSError as exc:
            raise ValueError(f"omni.selection.examples: cannot read {path}: {exc}") from exc
    return questions


def _example_question(row) -> str:
    text = row.get("query") or row.get("question") if isinstance(row, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise ValueError('no "query" or "question" string')
    return text.strip()


class EmbeddingSourceSelector:
    """Scores each source by its nearest labelled example questions and its descriptor (MiniLM cosines).

    A source's score: (1 - w) x the mean cosine of its `top_examples` nearest examples + w x the cosine to its
    descriptor's `knows` (w = `descriptor_weight`; a source without examples: the descriptor alone).

    Args:
        config: `omni.selection`.
        embedder: the shared `Embedder` (`encode(texts, is_query=True)`, L2-normalised rows).
        examples: source name -> its example questions (`load_example_questions`).
    """

    def __init__(self, config: SourceSelectionConfig, embedder, examples: Mapping[str, Sequence[str]]):
        self.config, self.embedder, self.examples = config, embedder, {k: list(v) for k, v in examples.items()}
        self._pools: dict[str, np.ndarray | None] | None = None
        self._knows: dict[str, np.ndarray] = {}

    @classmethod
    def from_config(cls, config: SourceSelectionConfig, embedder) -> "EmbeddingSourceSelector":
        return cls(config, embedder, {name: load_example_questions(paths) for name, paths in config.examples.items()})

    def warm_up(self) -> None:
        """Embeds the example pools once (about 500 short questions: a few seconds with MiniLM on one core)."""
        if self._pools is None:
            self._pools = {name: embed_pool(self.embedder, texts, f"{name} example questions")
                           for name, texts in self.examples.items()}

    def scores(self, question: str, descriptors: Sequence) -> dict[str, float]:
        self.warm_up()
        missing = [d for d in descriptors if d.name not in self._knows]
        if missing:
            for d, vector in zip(missing, self.embedder.encode([d.knows for d in missing], is_query=True)):
                self._knows[d.name] = np.asarray(vector)
        q = np.asarray(self.embedder.encode([question], is_query=True))[0]
        w, out = self.config.descriptor_weight, {}
        for d in descriptors:
            knows = float(self._knows[d.name] @ q)
            pool = self._pools.get(d.name)
            if pool is None or not len(pool):
                out[d.name] = knows
                continue
            cosines = np.sort(pool @ q)[::-1][:max(1, self.config.top_examples)]
            out[d.name] = (1 - w) * float(cosines.mean()) + w * knows
        return out

    def select(self, questions, descriptors, deadline=None, states=None) -> list[SourceChoice]:
        names = [d.name for d in descriptors]
        out = []
        for question in questions:
            try:
                out.append(choose(self.scores(question, descriptors), names, self.config, "embedding"))
            except Exception as exc:  # noqa: BLE001 - a failed score engages every source, never none
                log.warning("source selection failed for %r", question, exc_info=True)
                out.append(every_source(names, type(exc).__name__))
        return out


_NAME = re.compile(r"[a-z_]+")


def parse_source_names(output: str, names: Sequence[str]) -> list[str]:
    """The known source names in the model's reply, in the order it gives them, each once ("kg, sql" ->
    [kg, sql]); a name may be written with a space for its underscore ("public data")."""
    text = (output or "").lower().replace("public data", "public_data")
    found = [word for word in _NAME.findall(text) if word in names]
    return list(dict.fromkeys(found))


class LLMSourceSelector:
    """The paper's selector: the model reads the catalog of descriptors with the question and names up to `k`
    sources, best first (prompts/select_sources.txt; one batched call). A reply naming no known source falls
    back to `fallback` (the embedding selector), else to every source.

    Args:
        config: `omni.selection`.
        generator: the LLM backend.
        prompts: the `PromptLibrary`.
        fallback: a selector for unparsable replies, or None.
    """

    def __init__(self, config: SourceSelectionConfig, generator, prompts, fallback: SourceSelector | None = None):
        self.config, self.generator, self.fallback = config, generator, fallback
        self.template = prompts.get(config.prompt)

    def warm_up(self) -> None:
        if self.fallback is not None and hasattr(self.fallback, "warm_up"):
            self.fallback.warm_up()

    def request(self, question: str, descriptors: Sequence):
        from models.llm.generator import GenerationRequest

        catalog = "\n".join(f"- {d.name}: {d.knows}" for d in descriptors)
        return GenerationRequest(self.template.render(sources=catalog, query=question, k=self.config.k),
                                 max_new_tokens=self.config.max_new_tokens, stop=("\n",))

    def select(self, questions, descriptors, deadline=None, states=None) -> list[SourceChoice]:
        from models.answering.llm_calls import generate_traced

        names = [d.name for d in descriptors]
        requests = [self.request(q, descriptors) for q in questions]
        try:
            if states is not None:
                outputs = generate_traced(self.generator, "select sources", list(zip(states, requests)), deadline)
            else:
                outputs = self.generator.generate(requests, deadline=deadline)
        except Exception as exc:  # noqa: BLE001
            log.warning("LLM source selection failed", exc_info=True)
            outputs = [""] * len(questions)
            failure = type(exc).__name__
        else:
            failure = ""
        out = []
        for i, question in enumerate(questions):
            named = parse_source_names(outputs[i] if i < len(outputs) else "", names)[:max(1, self.config.k)]
            if named:
                scores = {n: (1.0 - 0.1 * named.index(n) if n in named else 0.0) for n in names}
                out.append(choose(scores, names, self.config, "llm"))
            elif self.fallback is not None:
                choice = self.fallback.select([question], descriptors, deadline)[0]
                out.append(SourceChoice(choice.engaged, choice.scores, f"llm, unparsed: {choice.how}"))
            else:
                out.append(every_source(names, failure or "the reply named no source"))
        return out


SELECTOR_KINDS = ("embedding", "llm")


def make_source_selector(config: SourceSelectionConfig, *, embedder=None, generator=None, prompts=None):
    """The profile's selector (`omni.selection.kind`).

    Raises:
        ValueError: an unknown kind, or a kind without the component it needs.
    """
    if config.kind not in SELECTOR_KINDS:
        raise ValueError(f"unknown omni.selection.kind {config.kind!r}; expected one of {list(SELECTOR_KINDS)}")
    embedding = EmbeddingSourceSelector.from_config(config, embedder) if embedder is not None else None
    if config.kind == "embedding":
        if embedding is None:
            raise ValueError("omni.selection.kind embedding needs the embedder")
        return embedding
    if generator is None or prompts is None:
        raise ValueError("omni.selection.kind llm needs the generator and the prompt library")
    return LLMSourceSelector(config, generator, prompts, fallback=embedding)
