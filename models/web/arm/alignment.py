"""Information alignment (ARM §3.2.1): each keyword rewritten as a short list of n-grams that occur in the pages.

The rewrite is decoded under a constraint whose language is "up to `per_keyword` of this keyword's candidate
n-grams, separated by `; `", so every n-gram the model writes exists in the question's own index:

- on CPU, the Lark `grammar` gets exact llguidance token masks in the transformers backend
  (`models/llm/grammar_decoding.py`); without llguidance the backend's prefix search uses `is_valid_prefix`;
- on GPU, vLLM's structured outputs read the same grammar.

The paper decodes inside one reasoning process with beam search over lists of n-grams; here each keyword is
one greedy request (all keywords of a batch in one `generate` call), the backends' decoding. Whatever a backend
returns, `NgramLanguage.parse` keeps only whole n-grams of the candidate set (a row cut by the token cap ends
inside an n-gram), so the property "no aligned n-gram is absent from the index" holds at the output even for a
backend that ignored the constraint. A keyword whose rewrite is empty (deadline, failed row) is searched by
its own words.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from models.deadline import Deadline
from models.llm.constraints import ListLanguage
from models.llm.generator import GenerationRequest
from models.llm.prompts import PromptLibrary
from models.web.arm.ngrams import NgramIndex

log = logging.getLogger(__name__)

SEPARATOR = "; "
STOP = ("\n",)


class NgramLanguage(ListLanguage):
    """Lists of 1..`per_keyword` distinct candidate n-grams joined by `SEPARATOR`.

    Args:
        candidates: the n-grams allowed (each a member of the question's index).
        per_keyword: the most n-grams one list may hold (>= 1).
    """

    def __init__(self, candidates: Sequence[str], per_keyword: int):
        super().__init__(sorted(set(candidates)), per_keyword, SEPARATOR, terminal="NGRAM")

    def parse(self, text: str) -> tuple[str, ...]:
        """The distinct whole candidate n-grams of a generated list, in order (anything else is dropped)."""
        kept = []
        for part in (text or "").split(SEPARATOR):
            part = part.strip()
            if part in self.members and part not in kept:
                kept.append(part)
        return tuple(kept[:self.max_items])


@dataclass(frozen=True)
class Alignment:
    """One keyword and the n-grams it was rewritten as (empty: not aligned; its own words are searched)."""

    keyword: str
    ngrams: tuple[str, ...] = ()

    def query(self, keep_keyword: bool = False) -> str:
        """The keyword's BM25 query: its n-grams (ARM), after the keyword itself with `keep_keyword`; the
        keyword alone when it has no n-gram."""
        if not self.ngrams:
            return self.keyword
        return " ".join(((self.keyword,) if keep_keyword else ()) + self.ngrams)


class Aligner:
    """Rewrites keywords as index n-grams with the LLM under an `NgramLanguage` constraint.

    Args:
        config: `web.arm` (`align_prompt`, `ngrams_per_keyword`, `candidates`, `max_candidates`,
            `align_max_new_tokens`).
        generator: the LLM backend (`generate(requests, deadline=...)`).
        prompts: the prompt library.
    """

    CANDIDATES = ("related", "all")

    def __init__(self, config, generator, prompts: PromptLibrary | None = None):
        if config.candidates not in self.CANDIDATES:
            raise ValueError(f"unknown web.arm.candidates {config.candidates!r}; expected {list(self.CANDIDATES)}")
        self.config, self.generator = config, generator
        self.template = (prompts or PromptLibrary()).get(config.align_prompt)  # fails at start-up

    def language(self, keyword: str, index: NgramIndex) -> NgramLanguage | None:
        """The keyword's candidate n-grams: those sharing a stem with it (`related`), or the index's most
        frequent (`all`); at most `max_candidates`. None when there is none (the keyword stays unaligned: a
        135M model given unrelated phrases picks one at random)."""
        limit = self.config.max_candidates
        grams = index.related(keyword, limit) if self.config.candidates == "related" else index.most_frequent(limit)
        return NgramLanguage(grams, self.config.ngrams_per_keyword) if grams else None

    def align(self, items: Sequence[tuple[str, Sequence[str], NgramIndex]],
              deadline: Deadline | None = None) -> list[list[Alignment]]:
        """The alignments of each (question, keywords, index), in order. An LLM failure leaves the keywords
        unaligned (logged), never an exception."""
        requests, owners, languages = [], [], []
        for i, (question, keywords, index) in enumerate(items):
            for keyword in keywords:
                language = self.language(keyword, index)
                if language is None:
                    continue
                messages = self.template.render(question=question, keyword=keyword)
                requests.append(GenerationRequest(messages, max_new_tokens=self.config.align_max_new_tokens,
                                                  stop=STOP, constraint=language.constraint()))
                owners.append((i, keyword))
                languages.append(language)
        rewritten: dict[tuple[int, str], tuple[str, ...]] = {}
        if requests:
            try:
                outputs = self.generator.generate(requests, deadline=deadline)
            except Exception:  # noqa: BLE001 - alignment is an improvement: keywords still search by their words
                log.warning("ARM alignment failed: %d keywords search by their own words", len(requests),
                            exc_info=True)
                outputs = [""] * len(requests)
            for owner, language, text in zip(owners, languages, outputs):
                rewritten[owner] = language.parse(text)
        return [[Alignment(k, rewritten.get((i, k), ())) for k in keywords]
                for i, (_, keywords, _) in enumerate(items)]
