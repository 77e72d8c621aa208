"""Request bodies of the 38 mock-API routes, and the table that turns (path, body, handler) rows into endpoints.

Every route is a POST whose JSON body is validated by one of the pydantic models below (a wrong or missing
field is a 422, like the official server) and whose answer is `{"result": X}`. Domain modules describe their
routes as `Route` rows; `add_routes` generates one async endpoint per row. Endpoints are `async` on purpose:
they then run one at a time on the event loop, which is what makes sharing one sqlite connection and the
in-memory tables safe (the official server is async for the same reason).

This module does not use `from __future__ import annotations`: FastAPI reads each generated endpoint's body
annotation at runtime, and it must be the model class itself, not a string.
"""
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

from fastapi import FastAPI
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel


class TextQuery(BaseModel):
    query: str


class IntQuery(BaseModel):
    query: int


class RankQuery(BaseModel):
    rank: int
    date: Optional[str] = None


class BillboardQuery(BaseModel):
    date: str
    attribute: str
    song_name: str


class GamesQuery(BaseModel):
    date: str
    team_name: Optional[str] = None


class GameIdsQuery(BaseModel):
    game_ids: List[str]


class MockAPIError(ValueError):
    """A request the official server answers with a 500 and a plain-text body (e.g. a year out of range)."""


@dataclass(frozen=True)
class Route:
    """One POST route: `handler(body)` (or `handler()` when `body` is None) returns the unwrapped result."""

    path: str
    body: Optional[type]
    handler: Callable[..., Any]


def add_routes(app: FastAPI, routes: List[Route]) -> None:
    """Registers every route on `app` as an async POST endpoint returning `{"result": ...}`."""
    for route in routes:
        app.post(route.path, name=route.path.strip("/").replace("/", "_"))(_endpoint(route.body, route.handler))


def add_error_handler(app: FastAPI) -> None:
    """`MockAPIError` becomes a 500 with a plain-text body, as the official server's uncaught errors do."""

    async def plain_500(request, exc: MockAPIError):
        return PlainTextResponse(f"Internal Server Error: {exc}", status_code=500)

    app.add_exception_handler(MockAPIError, plain_500)


def _endpoint(body_model: Optional[type], handler: Callable[..., Any]):
    if body_model is None:
        async def endpoint():
            return {"result": handler()}
    else:
        async def endpoint(body: body_model):  # evaluated now: the annotation is the model class
            return {"result": handler(body)}
    return endpoint
