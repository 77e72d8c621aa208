"""The KG pathway as the pipeline sees it (db3 Figure 2): an API-generation request per query, then the
generated program turned into evidence.

    api_request(query, domain) -> GenerationRequest     prompts/kg_api_<domain>.txt + chosen examples
                                                        + the domain's grammar as a decoding constraint
    evidence(query, domain, program_text) -> [facts]    compile -> execute (mock API) -> verbalise

`evidence` never raises: a program that does not parse or type-check, an API that is down or slow, a spent
budget, or even a bug in a domain module, is logged and means "no KG evidence", so the web pathway answers.
Generated text is cleaned of what chat models wrap code in (fences, an "API:" label) before parsing; the
parser itself stays strict.
"""
from __future__ import annotations

import logging
import re
from contextlib import nullcontext

from models.deadline import Deadline
from models.kg.apis import EntityMatcher, compile_program, signatures
from models.kg.config import KGConfig
from models.kg.examples import ExamplePool
from models.kg.executor import Limits, execute
from models.kg.language.errors import KGError
from models.kg.language.grammar import lark_grammar
from models.kg.language.prefix import PrefixChecker
from models.kg.verbalizer import verbalize
from models.llm.constraints import DecodingConstraint
from models.llm.generator import GenerationRequest
from models.llm.prompts import PromptLibrary
from models.paths import resolve_repo_path
from models.types import DOMAINS, Query

log = logging.getLogger(__name__)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```\s*$")
_LABEL = re.compile(r"^\s*(api|answer|program)\s*:\s*", re.IGNORECASE)
_STOP = ("\n\n", "\nQuery:", "Query:")
_TURN_PROMPT = "kg_api_turn"


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
        self._constraints = {}
        for domain in DOMAINS:  # fail at start-up on a missing prompt, not mid-batch
            self.prompts.get(_prompt_name(domain))

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
        system, intro = self.prompts.get(_prompt_name(domain)).render(query_time=query.query_time)
        turn = self.prompts.get(_TURN_PROMPT)
        # The instructions open the first user turn; each example is a user turn answered by an assistant
        # turn holding its program; the real query is the last user turn (few-shot as a conversation).
        turns = [(e.query, e.query_time, e.program) for e in examples] + [(query.text, query.query_time, None)]
        messages = [system]
        for i, (asked, asked_time, program) in enumerate(turns):
            ask = turn.render(query=asked, query_time=asked_time)[-1]["content"]
            messages.append({"role": "user", "content": f"{intro['content']}\n\n{ask}" if i == 0 else ask})
            if program is not None:
                messages.append({"role": "assistant", "content": program})
        messages = tuple(messages)
        return GenerationRequest(messages, adapter=self.config.api_adapter,
                                 max_new_tokens=self.config.api_max_new_tokens, stop=_STOP,
                                 constraint=self.constraint(domain) if self.config.constrained else None)

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
        text = clean_program(program_text)
        if not text:
            return []
        try:
            program = compile_program(text, domain)
            if not program.statements:
                return []
            # the HTTP client's calls end by the stage deadline too, not only start before it
            bounded = getattr(self.client, "bounded_by", None)
            with bounded(deadline) if bounded is not None else nullcontext():
                result = execute(program, self.client, now=query.time, limits=self.limits, matcher=self.matcher,
                                 deadline=deadline, question=query.text)
        except KGError as exc:
            log.info("no KG evidence for %s: %s", query.interaction_id, exc)
            return []
        except Exception:  # noqa: BLE001 - a bug or a transport error must cost one question, not the batch
            log.exception("KG pathway failed for %s on program %r", query.interaction_id, text)
            return []
        if result.stopped:
            log.info("KG program for %s stopped early: %s", query.interaction_id, result.stopped)
        return verbalize(result, self.config.max_fact_chars, self.config.max_listed)


def clean_program(text: str) -> str:
    """Generated text without code fences or a leading "API:" label."""
    text = _FENCE.sub("", (text or "").strip())
    return _LABEL.sub("", text).strip()


def _prompt_name(domain: str) -> str:
    return f"kg_api_{domain}"
