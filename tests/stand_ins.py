"""The tests' stand-in LLMs: what each declares of the `Generator` protocol besides generating (`ServesAnyAdapter`), and
a scripted one for the tests of the ElectricSheep stages (calculator, attributes, reasoning)."""
from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from models.llm.adapters import AdapterNames


class AnyAdapter(AdapterNames):
    """A stand-in LLM's adapters: whatever name a profile gives is served (its replies do not depend on the
    adapter), and none is loaded, so a warm-up asks none."""

    def get(self, name):
        return name


class ServesAnyAdapter:
    """The `Generator` protocol's adapter attributes for a test's stand-in LLM: any adapter served, none missing."""

    adapters: AdapterNames = AnyAdapter()
    missing_adapters: Mapping[str, str] = MappingProxyType({})


class ReplyingGenerator(ServesAnyAdapter):
    """Answers each request with `reply(request)` (called once per completion: a request with n > 1 gets n
    replies as its completions, as the backends return them); records requests; honours an expired deadline the
    way the real backends do (requests that cannot start get ""). Tokens are whitespace words."""

    def __init__(self, reply):
        self.reply = reply
        self.requests = []
        self.calls = 0

    def generate(self, requests, *, deadline=None):
        self.calls += 1
        self.requests.extend(requests)
        if deadline is not None and deadline.expired():
            return ["" for _ in requests]
        from models.isolation import ItemResults
        from models.llm.generator import Completion

        completions = {i: tuple(Completion(self.reply(r)) for _ in range(r.n)) for i, r in enumerate(requests)}
        return ItemResults([c[0].text for c in completions.values()], {}, completions)

    def count_tokens(self, text):
        return len(text.split())

    def truncate_tokens(self, text, max_tokens):
        return " ".join(text.split()[:max(0, max_tokens)])


def user_text(request) -> str:
    return request.messages[-1]["content"]
