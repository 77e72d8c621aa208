"""Start-up warm-up: every adapter and every grammar a graded batch can use is used once before the first batch.

With `enforce_eager: true` (the g4dn profile) vLLM compiles nothing at start-up, so the first request that uses
a LoRA adapter loads it into a slot and builds the Triton LoRA kernels for its shapes, and the first request under
a grammar compiles that grammar (xgrammar, vLLM's default structured-output backend; its compiler caches what it
compiled, `v1/structured_output/backend_xgrammar.py` lines 73-77) and the token-mask kernel. On a T4 every one of
these is a Triton compile, and without a warm-up they land in the first graded batches, on the clock of a batch
of 16 questions. The grader's limit on `UserModel()` is separate, so they are paid there instead.

The requests: one tiny unconstrained request per adapter the profile configures and one for the base model, then
each source's own native request (its real prompt, adapter and grammar) for one question per domain, one request
per distinct (adapter, grammar); all capped at two new tokens and sent in one generation call.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass, field
from typing import Sequence

from models.llm.generator import GenerationRequest
from models.types import DOMAINS, Query

log = logging.getLogger(__name__)

WARM_UP_TOKENS = 2
# One question per domain, worded so that every source writes its native query for it (SQL only writes for a
# question that counts or compares).
QUESTIONS = {
    "movie": "how many movies directed by christopher nolan won an oscar before 2020?",
    "music": "how many grammy awards did taylor swift win for album of the year?",
    "finance": "what was the average closing price of apple stock in march 2024?",
    "sports": "how many games did the boston celtics win in the 2023 season?",
    "open": "how many countries border switzerland?",
}
_SAY_OK = ({"role": "user", "content": "Say OK."},)


@dataclass
class WarmUpReport:
    """What the warm-up sent and how long it took.

    Attributes:
        adapters: the adapters warmed (None = the base model).
        grammars: (source, domain) of each grammar-constrained request.
        seconds: wall time of the generation call.
        failed: request index -> why it produced nothing (the backend's reasons, or the exception).
    """

    adapters: list[str | None] = field(default_factory=list)
    grammars: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    failed: dict[int, str] = field(default_factory=dict)

    def line(self) -> str:
        return (f"warm-up: {len(self.adapters) + len(self.grammars)} requests ({len(self.adapters)} adapters with "
                f"the base model, {len(self.grammars)} grammars) in {self.seconds:.1f} s; {len(self.failed)} failed")


def warm_up_requests(adapter_names: Sequence[str], sources) -> tuple[list[GenerationRequest], WarmUpReport]:
    """The requests of the warm-up and a report that names them (not yet run)."""
    report = WarmUpReport()
    requests = []
    for adapter in (None, *adapter_names):
        requests.append(GenerationRequest(_SAY_OK, adapter=adapter, max_new_tokens=1))
        report.adapters.append(adapter)
    seen = set()
    for source in sources:
        for domain in DOMAINS:
            request = _native(source, domain)
            grammar = _grammar_of(request)
            if grammar is None or (request.adapter, grammar) in seen:
                continue
            seen.add((request.adapter, grammar))
            requests.append(dataclasses.replace(request, max_new_tokens=WARM_UP_TOKENS))
            report.grammars.append((source.descriptor.name, domain))
    return requests, report


def warm_up(generator, adapter_names: Sequence[str], sources) -> WarmUpReport:
    """Sends the warm-up requests in one call; a failure is reported and logged, never raised (a request that
    fails here fails alone in a graded batch too)."""
    requests, report = warm_up_requests(adapter_names, sources)
    started = time.monotonic()
    try:
        outputs = generator.generate(requests)
        report.failed = dict(getattr(outputs, "reasons", {}))
    except Exception as exc:  # noqa: BLE001 - start-up goes on; the first batch pays what was not warmed
        log.exception("warm-up failed")
        report.failed = {i: f"{type(exc).__name__}: {exc}" for i in range(len(requests))}
    report.seconds = time.monotonic() - started
    log.info(report.line())
    for i, why in sorted(report.failed.items()):
        log.warning("warm-up request %d failed: %s", i, why)
    return report


def _native(source, domain: str) -> GenerationRequest | None:
    try:
        return source.native_request(Query(f"warm-up-{domain}", QUESTIONS[domain], "03/01/2024, 10:00:00 PT"),
                                     domain)
    except Exception as exc:  # noqa: BLE001 - a source that cannot write one is warmed by its first batch
        log.warning("warm-up: %s could not write its %s request: %s", source.descriptor.name, domain, exc)
        return None


def _grammar_of(request: GenerationRequest | None) -> str | None:
    constraint = getattr(request, "constraint", None)
    return getattr(constraint, "regex", None) or getattr(constraint, "grammar", None)
