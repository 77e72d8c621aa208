"""The KG pathway as the pipeline sees it (db3 Figure 2): an API-generation request per query, then the
generated program turned into evidence.

    api_request(query, domain) -> GenerationRequest     prompts/kg_api_<domain>.txt + chosen examples
                                                        (or kg.api_prompt's short request, for an adapter)
                                                        + the domain's grammar as a decoding constraint
    run(query, domain, program_text) -> KGEvidence      compile -> execute (mock API) -> verbalise, plus
                                                        the outcome and the program's own value (`direct`)
    evidence(query, domain, program_text) -> [facts]    run(...).facts

`run` never raises: a program that does not parse or type-check, an API that is down or slow, a spent
budget, or even a bug in a domain module, is logged and means "no KG evidence", so the web pathway answers.
Generated text is cleaned of what chat models wrap code in (fences, an "API:" label) before parsing; the
parser itself stays strict.
"""
from __future__ import annotations

import logging
import re
from contextlib import nullcontext
from dataclasses import dataclass, field

from models.deadline import Deadline
from models.kg.apis import EntityMatcher, compile_program, signatures
from models.kg.checks import NOT_FINAL, Check, ProgramChecks
from models.kg.checks.program_checks import not_final, refused
from models.kg.config import KGConfig
from models.kg.examples import ExamplePool
from models.kg.executor import ExecutionResult, Limits, execute
from models.kg.format import format_answer_value, join_answers
from models.kg.language.ast import Call, Condition, ListArg, SelectKey, Star, format_program
from models.kg.language.errors import KGError
from models.kg.language.grammar import lark_grammar
from models.kg.language.prefix import PrefixChecker
from models.kg.verbalizer import verbalize
from models.llm.constraints import DecodingConstraint
from models.llm.generator import GenerationRequest
from models.llm.prompts import PromptLibrary
from models.paths import resolve_repo_path
from models.pathways import KGOutcome
from models.types import DOMAINS, Query

log = logging.getLogger(__name__)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```\s*$")
_LABEL = re.compile(r"^\s*(api|answer|program)\s*:\s*", re.IGNORECASE)
_STOP = ("\n\n", "\nQuery:", "Query:")
_TURN_PROMPT = "kg_api_turn"


@dataclass(frozen=True)
class KGEvidence:
    """What running one generated program gave (all of it goes into the answer's trace).

    Attributes:
        program: the cleaned program text.
        outcome: one of `KGOutcome` (models/pathways.py): empty (no program / "None") | parse-error | refused (a check:
            `checks`) | api-error | failed | executed | stopped | no-data.
        facts: verbalised facts for the answer prompt.
        direct: the final statement's value, count or average formatted as an answer ("" = none: rows, or
            a list longer than `max_direct_items`, need the model to combine them).
        error: the parse/API error message, when there was one.
        statements: what each statement did when executed (kind, what, error).
        calls: the program as parsed (after the checks' repairs): each statement's function and arguments
            (`describe_calls`).
        checks: each program check's verdict (`models/kg/checks/`): passed, repaired, refused or not final.
        repaired: the program as run, when a check changed it ("" = as generated).
    """

    program: str = ""
    outcome: str = KGOutcome.EMPTY
    facts: tuple[str, ...] = ()
    direct: str = ""
    error: str = ""
    statements: tuple[dict, ...] = field(default=())
    calls: tuple[dict, ...] = field(default=())
    checks: tuple[dict, ...] = field(default=())
    repaired: str = ""

    def as_trace(self) -> dict:
        return {"program": self.program, "repaired": self.repaired, "calls": list(self.calls),
                "outcome": self.outcome, "error": self.error, "checks": list(self.checks), "facts": list(self.facts),
                "direct": self.direct, "statements": list(self.statements)}


def describe_calls(program) -> tuple[dict, ...]:
    """Each statement of a compiled program as plain data: the function it calls (or "sort"), its arguments
    (literal values; conditions as {op, key, value}; "*" for a star) and the keys it selects."""
    def value(arg):
        if isinstance(arg, Star):
            return "*"
        if isinstance(arg, Condition):
            return {"op": arg.op, "key": arg.key, "value": arg.value.value}
        if isinstance(arg, ListArg):
            return [value(item) for item in arg.items]
        return getattr(arg, "value", None)

    out = []
    for statement in program.statements:
        head = statement.head
        arguments = [value(a) for a in head.args] if isinstance(head, Call) else [value(c) for c in head.conditions]
        out.append({"function": head.name if isinstance(head, Call) else "sort", "arguments": arguments,
                    "select": [s.name for s in statement.selectors if isinstance(s, SelectKey)]})
    return tuple(out)


class KGPathway:
    """Args:
        config: the profile's `kg` section.
        client: the mock-API client (official wrapper method names).
        embedder: optional; selects in-context examples and matches entity names.
        pool: the example pool (default: loaded from `config.icl_pool`).
        prompts: the prompt library (default: `prompts/`).
    """

    def __init__(self, config: KGConfig, client, embedder=None, pool: ExamplePool | None = None,
                 prompts: PromptLibrary | None = None):
        self.config = config
        self.client = client
        self.pool = pool if pool is not None else ExamplePool.load(resolve_repo_path(config.icl_pool), embedder)
        self.prompts = prompts or PromptLibrary()
        self.matcher = EntityMatcher(embedder, config.match_min_similarity)
        self.limits = Limits(config.max_calls_per_question, config.max_rows, config.max_listed)
        self.checks = ProgramChecks(embedder, config.key_match_threshold, config.program_checks)
        self._constraints = {}
        for domain in DOMAINS:  # fail at start-up on a missing prompt, not mid-batch
            self.prompts.get(_prompt_name(domain))
        if config.api_prompt:  # ... or one whose slots the request cannot fill
            self.prompts.get(config.api_prompt).render(domain=DOMAINS[0], query="", query_time="")

    @classmethod
    def from_config(cls, config: KGConfig, embedder=None) -> "KGPathway":
        """Builds the pathway with the HTTP client for `config.api_url` / `$CRAG_MOCK_API_URL`."""
        from models.kg.client import MockAPIClient

        client = MockAPIClient(config.api_url or None, config.timeout_s, config.retries)
        return cls(config, client, embedder=embedder)

    def api_request(self, query: Query, domain: str) -> GenerationRequest | None:
        """The generation request that asks the model for a program; None for an unknown domain."""
        if domain not in DOMAINS:
            return None
        examples = self.pool.select(query.text, domain, self.config.icl_k)
        asked = self.checks.question_for_generation(query)  # its dates as the API writes them
        turns = [(e.query, e.query_time, e.program) for e in examples] + [(asked, query.query_time, None)]
        if self.config.api_prompt:
            messages = self._adapter_messages(domain, turns)
        else:
            messages = self._described_messages(domain, turns)
        return GenerationRequest(messages, adapter=self.config.api_adapter,
                                 max_new_tokens=self.config.api_max_new_tokens, stop=_STOP,
                                 constraint=self.constraint(domain) if self.config.constrained else None)

    def _described_messages(self, domain: str, turns) -> tuple[dict, ...]:
        """The domain's prompt, which describes the API; the instructions open the first user turn, each
        in-context example is a user turn answered by an assistant turn holding its program, the real query
        is the last user turn (few-shot as a conversation)."""
        system, intro = self.prompts.get(_prompt_name(domain)).render(query_time=turns[-1][1])
        turn = self.prompts.get(_TURN_PROMPT)
        messages = [system]
        for i, (asked, asked_time, program) in enumerate(turns):
            ask = turn.render(query=asked, query_time=asked_time)[-1]["content"]
            messages.append({"role": "user", "content": f"{intro['content']}\n\n{ask}" if i == 0 else ask})
            if program is not None:
                messages.append({"role": "assistant", "content": program})
        return tuple(messages)

    def _adapter_messages(self, domain: str, turns) -> tuple[dict, ...]:
        """`kg.api_prompt`'s short request (no API description: the adapter has learned it), same turns."""
        template = self.prompts.get(self.config.api_prompt)
        system, messages = (), []
        for asked, asked_time, program in turns:
            *system, ask = template.render(domain=domain, query=asked, query_time=asked_time)
            messages.append(ask)
            if program is not None:
                messages.append({"role": "assistant", "content": program})
        return (*system, *messages)

    def constraint(self, domain: str):
        """The domain's decoding constraint (prefix checks for transformers, the Lark grammar for vLLM)."""
        if domain not in self._constraints:
            functions = signatures(domain)
            checker = PrefixChecker(functions)
            self._constraints[domain] = DecodingConstraint(is_valid_prefix=checker.is_valid_prefix,
                                                           is_complete=checker.is_complete, regex=None,
                                                           grammar=lark_grammar(functions))
        return self._constraints[domain]

    def evidence(self, query: Query, domain: str, program_text: str, deadline: Deadline | None = None) -> list[str]:
        """Facts from running the generated program; [] for "None", an empty or a broken program, or any
        failure (logged)."""
        return list(self.run(query, domain, program_text, deadline).facts)

    def run(self, query: Query, domain: str, program_text: str, deadline: Deadline | None = None,
            max_direct_items: int = 10) -> KGEvidence:
        """Runs the generated program; every failure is an outcome, never an exception."""
        text = clean_program(program_text)
        if not text:
            return KGEvidence(text, KGOutcome.EMPTY)
        try:
            program = compile_program(text, domain)
            program, before = self.checks.before(program, query, signatures(domain)) if program.statements \
                else (program, [])
        except KGError as exc:
            log.info("KG program for %s does not compile: %s", query.interaction_id, exc)
            return KGEvidence(text, KGOutcome.PARSE_ERROR, error=str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must cost one question, not the batch
            log.exception("KG pathway failed for %s on program %r", query.interaction_id, text)
            return KGEvidence(text, KGOutcome.FAILED, error=f"{type(exc).__name__}: {exc}")
        if not program.statements:
            return KGEvidence(text, KGOutcome.EMPTY)
        calls, checks = describe_calls(program), tuple(c.as_trace() for c in before)
        repaired = format_program(program) if any(c.verdict == "repaired" for c in before) else ""
        refusal = refused(before)
        if refusal is not None:
            log.info("KG program for %s refused: %s", query.interaction_id, refusal.why)
            return KGEvidence(text, KGOutcome.REFUSED, error=refusal.why, calls=calls, checks=checks, repaired=repaired)
        try:
            # the HTTP client's calls end by the stage deadline too, not only start before it
            bounded = getattr(self.client, "bounded_by", None)
            with bounded(deadline) if bounded is not None else nullcontext():
                result = execute(program, self.client, now=query.time, limits=self.limits, matcher=self.matcher,
                                 deadline=deadline, question=query.text)
            facts = verbalize(result, self.config.max_fact_chars, self.config.max_listed)
        except KGError as exc:
            log.info("no KG evidence for %s: %s", query.interaction_id, exc)
            return KGEvidence(text, KGOutcome.API_ERROR, error=str(exc), calls=calls, checks=checks, repaired=repaired)
        except Exception as exc:  # noqa: BLE001 - a bug or a transport error must cost one question, not the batch
            log.exception("KG pathway failed for %s on program %r", query.interaction_id, text)
            return KGEvidence(text, KGOutcome.FAILED, error=f"{type(exc).__name__}: {exc}", calls=calls, checks=checks,
                              repaired=repaired)
        if result.stopped:
            log.info("KG program for %s stopped early: %s", query.interaction_id, result.stopped)
        statements = tuple({"kind": s.kind, "what": s.what, "error": s.error} for s in result.statements)
        if not facts:
            # What the program found nothing of is traced, not used: the fixture server answers a failure
            # (500, bad JSON) with an empty result too, so "no data" cannot yet be told from "no answer".
            return KGEvidence(text, KGOutcome.NO_DATA, statements=statements, calls=calls, checks=checks, repaired=repaired)
        direct = direct_answer(result, max_direct_items)
        after = self._after(program, result, query, direct)
        checks += tuple(c.as_trace() for c in after)
        refusal = refused(after)
        if refusal is not None:
            log.info("KG evidence for %s refused: %s", query.interaction_id, refusal.why)
            return KGEvidence(text, KGOutcome.REFUSED, error=refusal.why, statements=statements, calls=calls,
                              checks=checks, repaired=repaired)
        outcome = KGOutcome.STOPPED if result.stopped else KGOutcome.EXECUTED
        return KGEvidence(text, outcome, tuple(facts), "" if not_final(after) else direct, error=result.stopped,
                          statements=statements, calls=calls, checks=checks, repaired=repaired)

    def _after(self, program, result, query: Query, direct: str) -> list:
        try:
            return self.checks.after(program, result, query, direct)
        except Exception as exc:  # noqa: BLE001 - a check's bug costs the value its finality, never the batch
            log.exception("KG checks failed for %s", query.interaction_id)
            return [Check("checks", NOT_FINAL, f"the checks failed: {type(exc).__name__}: {exc}")]


def direct_answer(result: ExecutionResult, max_items: int = 10) -> str:
    """The final statement's value(s), count or average as answer text; "" when the model must combine facts
    (whole rows, several attributes, a long list, an execution that stopped early)."""
    if result.stopped:
        return ""
    final = [s for s in result.statements if not s.consumed]
    if not final:
        return ""
    last = final[-1]
    if last.kind in ("count", "average") and last.number is not None:
        return format_answer_value(last.number)
    if last.kind == "values" and 0 < len(last.values) <= max_items and len({v.key for v in last.values}) == 1:
        return join_answers([format_answer_value(v.value) for v in last.values])
    return ""


def clean_program(text: str) -> str:
    """Generated text without code fences or a leading "API:" label."""
    text = _FENCE.sub("", (text or "").strip())
    return _LABEL.sub("", text).strip()


def _prompt_name(domain: str) -> str:
    return f"kg_api_{domain}"
