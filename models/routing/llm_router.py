"""db3's domain router: one word from the base model, parsed leniently.

db3 asked the base model (no adapter, greedy, 3 new tokens) for one of movie / sports / finance / music,
or "other", and checked the output by substring in a fixed priority order (finance, music, sports,
movie). A fixed order misreads outputs such as "movie music" (music wins although the model said movie
first), so here the *first* domain word in the output wins, and a few near-synonyms the small CPU model
likes to produce ("film", "stock", "sport") count too. Anything else, "other" and the empty output of a
request that missed the deadline included, is "open".
"""
from __future__ import annotations

import re
from typing import Sequence

from models.deadline import Deadline
from models.llm.generator import GenerationRequest, Generator
from models.llm.prompts import PromptLibrary
from models.types import Query

# Word stems -> domain. Matched at word starts only, so "amusic" or "repertoire" do not fire.
_STEMS = {
    "financ": "finance", "stock": "finance", "econom": "finance",
    "music": "music", "song": "music",
    "sport": "sports",
    "movie": "movie", "film": "movie", "cinema": "movie",
    "open": "open", "other": "open",
}
_DOMAIN_WORD = re.compile(r"\b(" + "|".join(sorted(_STEMS, key=len, reverse=True)) + r")", re.IGNORECASE)


def parse_domain(output: str) -> str:
    """Maps a raw model output to one of `models.types.DOMAINS`.

    Args:
        output: the generated text, e.g. "Movie", " sports.", "Category: finance", "" or garbage.

    Returns:
        The domain of the first domain word in `output`; "open" when there is none.
    """
    match = _DOMAIN_WORD.search(output or "")
    return _STEMS[match.group(1).lower()] if match else "open"


class LLMRouter:
    """Routes with the domain prompt on the base model: one batched `generate` call per batch."""

    def __init__(self, generator: Generator, prompt: str = "domain", max_new_tokens: int = 4,
                 prompts: PromptLibrary | None = None):
        self.generator = generator
        self.template = (prompts or PromptLibrary()).get(prompt)
        self.max_new_tokens = max_new_tokens

    def route(self, queries: Sequence[Query], deadline: Deadline | None = None) -> list[str]:
        """One domain per query, in order ("open" for any query the model could not answer in time)."""
        if not queries:
            return []
        requests = [GenerationRequest(self.template.render(query=q.text), adapter=None,
                                      max_new_tokens=self.max_new_tokens, stop=("\n",))
                    for q in queries]
        outputs = list(self.generator.generate(requests, deadline=deadline))
        outputs += [""] * (len(queries) - len(outputs))  # a short reply must not shift or drop domains
        return [parse_domain(text) for text in outputs[:len(queries)]]
