"""A scripted LLM stand-in for the tests of the ElectricSheep stages (calculator, attributes, reasoning)."""
from __future__ import annotations


class ReplyingGenerator:
    """Answers each request with `reply(request)`; records requests; honours an expired deadline the way
    the real backends do (requests that cannot start get ""). Tokens are whitespace words."""

    def __init__(self, reply):
        self.reply = reply
        self.requests = []
        self.calls = 0

    def generate(self, requests, *, deadline=None):
        self.calls += 1
        self.requests.extend(requests)
        if deadline is not None and deadline.expired():
            return ["" for _ in requests]
        return [self.reply(request) for request in requests]

    def count_tokens(self, text):
        return len(text.split())

    def truncate_tokens(self, text, max_tokens):
        return " ".join(text.split()[:max(0, max_tokens)])


def user_text(request) -> str:
    return request.messages[-1]["content"]
