"""Finance domain: prices (points, ranges, relative dates), dividends and per-company metrics over the
`finance/` routes.

A company is written as a ticker ("aapl") or a name ("microsoft"). A ticker-shaped name is tried as a
ticker first (one call, no search); when that finds nothing the name goes through `get_company_name` (a
BM25 search), `EntityMatcher` (which prefers "Apple Inc. Common Stock" over "Apple Hospitality REIT" for
"apple") and `get_ticker_by_name`.

Prices: `latest`/`now` is the newest one-minute bar at or before the query time (query times are Pacific,
bar times Eastern: +3 h); any other time is resolved to a span of days and answered from the daily
history. A single day with no daily bar is answered from that day's minute bars when it is within the
five-day intraday window (today's prices so far), else by the nearest earlier trading day, with a note
saying so. db3 always returned the *open* for "latest" whatever was asked; here the whole bar is kept.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Iterator

from models.kg.apis.context import CallContext
from models.kg.apis.records import LazyRecord, Row, Table
from models.kg.apis.registry import kg_function
from models.kg.language.signature import CONDITIONS, TEXT, ArgKind, Param
from models.kg.language.timeexpr import TimeSpan, parse_date

_TICKER = re.compile(r"[A-Za-z][A-Za-z0-9.\-]{0,5}\Z")
_EASTERN_MINUS_PACIFIC = timedelta(hours=3)
_TIME = frozenset({ArgKind.STRING})
_OPTIONAL_TIME = frozenset({ArgKind.STRING, ArgKind.NONE})
_PRICE_ALIASES = {"price": "close", "closing price": "close", "closing": "close", "close price": "close",
                  "opening price": "open", "opening": "open", "open price": "open", "highest": "high",
                  "high price": "high", "lowest": "low", "low price": "low", "trading volume": "volume",
                  "day": "date"}
_DIVIDEND_ALIASES = {"amount": "dividend", "dividend per share": "dividend", "value": "dividend",
                     "ex date": "date", "ex dividend date": "date", "payment date": "date"}
_METRIC_ALIASES = {"pe": "pe_ratio", "p e ratio": "pe_ratio", "price earnings ratio": "pe_ratio",
                   "market capitalization": "market_cap", "marketcap": "market_cap", "capitalization": "market_cap",
                   "earnings per share": "eps"}
_INFO_ALIASES = {"name": "longName", "company name": "longName", "company": "longName"}


@kg_function("finance", Param("company", TEXT), Param("time", _TIME),
             Param("end_time", _OPTIONAL_TIME, required=False))
def get_stock_price(ctx: CallContext, company: str, time: str, end_time: str | None = None) -> Table:
    """get_stock_price(company, time, end_time)[key]: date, open, high, low, close, volume; time is a date
    ("2024-02-27"), a month, "yesterday", "recent friday", "last week", "latest"; end_time makes a range."""
    span = ctx.time(time)
    if end_time is not None:
        span = TimeSpan(span.start, ctx.time(end_time).end)
    if span.intraday:
        return _latest_price(ctx, company)
    found = _fetch(ctx, company, "finance_get_price_history")
    what = f"daily prices of {found[1] if found else repr(company)} for {span.describe()}"
    if found is None:
        return Table((), what, found=False)
    ticker, label, history = found
    days = sorted((day, bar) for day, bar in ((parse_date(k), v) for k, v in history.items())
                  if day and isinstance(bar, dict))
    chosen = [(day, bar) for day, bar in days if span.contains(day)]
    if span.pick != "all" and chosen:
        chosen = [chosen[-1] if span.pick == "last" else chosen[0]]
    notes: tuple[str, ...] = ()
    if not chosen and span.single_day:
        chosen, notes = _missing_day(ctx, ticker, span.single_day, days)
    rows = tuple(Row(_bar_fields(ticker, day.isoformat(), bar), f"{ticker} on {day.isoformat()}", "ticker")
                 for day, bar in chosen)
    return Table(rows, what, notes=notes, aliases=_PRICE_ALIASES)


@kg_function("finance", Param("company", TEXT), Param("condition", CONDITIONS, required=False))
def get_stock_dividend(ctx: CallContext, company: str, condition=()) -> Table:
    """get_stock_dividend(company, condition)[key]: one row per dividend with date and dividend (per share),
    oldest first; filter with e.g. [ge(date, "2024-01-01"), le(date, "2024-03-31")]."""
    found = _fetch(ctx, company, "finance_get_dividends_history")
    if found is None:  # no dividend history: a company the KG knows (it has prices) has paid none
        known = _fetch(ctx, company, "finance_get_price_history")
        label = known[1] if known else repr(company)
        return Table((), f"dividends of {label}", found=known is not None)
    ticker, label, history = found
    dated = sorted((day, amount) for day, amount in ((parse_date(k), v) for k, v in history.items()) if day)
    rows = tuple(Row({"ticker": ticker, "date": day.isoformat(), "dividend": amount}, f"{ticker} on {day.isoformat()}",
                     "ticker") for day, amount in dated)
    return Table(rows, f"dividends of {label}", aliases=_DIVIDEND_ALIASES)


@kg_function("finance", Param("company", TEXT))
def get_stock_market_cap(ctx: CallContext, company: str) -> Table:
    """get_stock_market_cap(company)[key]: market_cap (US dollars)."""
    return _metric(ctx, company, "finance_get_market_capitalization", "market_cap")


@kg_function("finance", Param("company", TEXT))
def get_stock_pe_ratio(ctx: CallContext, company: str) -> Table:
    """get_stock_pe_ratio(company)[key]: pe_ratio (forward price/earnings)."""
    return _metric(ctx, company, "finance_get_pe_ratio", "pe_ratio")


@kg_function("finance", Param("company", TEXT))
def get_stock_eps(ctx: CallContext, company: str) -> Table:
    """get_stock_eps(company)[key]: eps (forward earnings per share)."""
    return _metric(ctx, company, "finance_get_eps", "eps")


@kg_function("finance", Param("company", TEXT))
def get_stock_info(ctx: CallContext, company: str) -> Table:
    """get_stock_info(company)[key]: the company profile: longName, sector, industry, marketCap, dividendRate,
    dividendYield, trailingPE, previousClose, fiftyTwoWeekHigh, ... (yfinance names)."""
    found = _fetch(ctx, company, "finance_get_info")
    if found is None or not isinstance(found[2], dict):
        return Table((), f"company profile of {company!r}", found=False)
    ticker, label, info = found
    return Table((Row(dict(info), label, "symbol"),), f"company profile of {label}", aliases=_INFO_ALIASES)


@kg_function("finance", Param("company", TEXT))
def get_company_names(ctx: CallContext, company: str) -> Table:
    """get_company_names(company)[key]: the listed companies whose name the search finds (name, ticker),
    best match first; count them with ["len"]."""
    names = ctx.api.call("finance_get_company_name", company.strip())
    names = [n for n in names if isinstance(n, str) and n] if isinstance(names, list) else []
    best = ctx.matcher.pick(company, names)
    ordered = best + [n for n in names if n not in best]
    rows = tuple(Row(LazyRecord({"name": name}, {"ticker": lambda name=name: ctx.api.call(
        "finance_get_ticker_by_name", name)}), name, "ticker") for name in ordered)
    return Table(rows, f"company names matching {company!r}", aliases=_INFO_ALIASES, found=bool(rows))


@kg_function("finance", Param("company", TEXT), Param("time", _TIME),
             Param("end_time", _OPTIONAL_TIME, required=False))
def get_stock_minute_prices(ctx: CallContext, company: str, time: str, end_time: str | None = None) -> Table:
    """get_stock_minute_prices(company, time, end_time)[key]: one-minute bars (date, time, open, high, low,
    close, volume) of the last five trading days within the time; count or average them."""
    span = ctx.time(time)
    if end_time is not None:
        span = TimeSpan(span.start, ctx.time(end_time).end)
    found = _fetch(ctx, company, "finance_get_detailed_price_history")
    what = f"one-minute prices of {found[1] if found else repr(company)} for {span.describe()}"
    if found is None:
        return Table((), what, found=False)
    ticker = found[0]
    cutoff = ctx.now + _EASTERN_MINUS_PACIFIC if ctx.now else None  # nothing after the question was asked
    bars = [(stamp, bar) for stamp, bar in _minute_bars(ctx, ticker)
            if span.contains(stamp.date()) and (cutoff is None or stamp <= cutoff)]
    if span.pick != "all" and bars:  # "latest": the newest day's bars, not one bar
        day = bars[-1][0].date() if span.pick == "last" else bars[0][0].date()
        bars = [(stamp, bar) for stamp, bar in bars if stamp.date() == day]
    rows = tuple(Row(_bar_fields(ticker, stamp.date().isoformat(), bar, stamp.strftime("%H:%M EST")),
                     f"{ticker} at {stamp:%Y-%m-%d %H:%M} EST", "ticker") for stamp, bar in bars)
    return Table(rows, what, aliases=_PRICE_ALIASES)


# ---------------------------------------------------------------------- helpers
def _tickers(ctx: CallContext, company: str) -> Iterator[tuple[str, str]]:
    """(ticker, label) candidates for a written company, cheapest first."""
    text = company.strip()
    if _TICKER.match(text):
        yield text.upper(), text.upper()
    names = ctx.api.call("finance_get_company_name", text)
    for name in ctx.matcher.pick(text, names if isinstance(names, list) else []):
        ticker = ctx.api.call("finance_get_ticker_by_name", name)
        if isinstance(ticker, str) and ticker:
            yield ticker, f"{ticker} ({name})"


def _fetch(ctx: CallContext, company: str, method: str) -> tuple[str, str, Any] | None:
    """(ticker, label, data) from the first ticker candidate the route knows, else None."""
    for ticker, label in _tickers(ctx, company):
        data = ctx.api.call(method, ticker)
        if data is not None and data != {}:
            return ticker, label, data
    return None


def _metric(ctx: CallContext, company: str, method: str, field: str) -> Table:
    found = _fetch(ctx, company, method)
    if found is None:
        return Table((), f"{field} of {company!r}", found=False)
    ticker, label, value = found
    return Table((Row({"ticker": ticker, field: value}, label, "ticker"),), f"{field} of {label}",
                 aliases=_METRIC_ALIASES)


def _bar_fields(ticker: str, day: str, bar: dict, time: str | None = None) -> dict:
    fields = {"ticker": ticker, "date": day}
    if time:
        fields["time"] = time
    fields.update({str(k).lower(): v for k, v in bar.items()})
    return fields


def _minute_bars(ctx: CallContext, ticker: str) -> list[tuple[datetime, dict]]:
    history = ctx.api.call("finance_get_detailed_price_history", ticker)
    bars = []
    for stamp, bar in (history or {}).items() if isinstance(history, dict) else ():
        try:
            bars.append((datetime.strptime(str(stamp)[:19], "%Y-%m-%d %H:%M:%S"), bar))
        except ValueError:
            continue
    return sorted((b for b in bars if isinstance(b[1], dict)), key=lambda b: b[0])


def _latest_price(ctx: CallContext, company: str) -> Table:
    found = _fetch(ctx, company, "finance_get_detailed_price_history")
    if found is None:
        return Table((), f"latest price of {company!r}", found=False)
    ticker, label = found[0], found[1]
    bars = _minute_bars(ctx, ticker)  # cached: the same call as _fetch made
    cutoff = ctx.now + _EASTERN_MINUS_PACIFIC if ctx.now else None
    before = [b for b in bars if cutoff is None or b[0] <= cutoff] or bars[:1]
    if not before:
        return Table((), f"latest price of {label}")
    stamp, bar = before[-1]
    fields = _bar_fields(ticker, stamp.date().isoformat(), bar, stamp.strftime("%H:%M EST"))
    row = Row(fields, f"{ticker} at {stamp:%Y-%m-%d %H:%M} EST", "ticker")
    return Table((row,), f"latest price of {label}", aliases=_PRICE_ALIASES)


def _missing_day(ctx: CallContext, ticker: str, day, days: list) -> tuple[list, tuple[str, ...]]:
    """A day without a daily bar: its minute bars so far, else the nearest earlier trading day."""
    minutes = [bar for stamp, bar in _minute_bars(ctx, ticker) if stamp.date() == day]
    if minutes:
        summary = {"open": minutes[0].get("Open"), "high": max(_values(minutes, "High"), default=None),
                   "low": min(_values(minutes, "Low"), default=None), "close": minutes[-1].get("Close"),
                   "volume": sum(_values(minutes, "Volume"))}
        return [(day, summary)], (f"The prices of {ticker} on {day.isoformat()} are from intraday data "
                                  f"(close = the last minute recorded).",)
    earlier = [(d, bar) for d, bar in days if d < day]
    if not earlier:
        return [], ()
    nearest = earlier[-1]
    return [nearest], (f"{ticker} has no trading record on {day.isoformat()}; the nearest earlier trading day, "
                       f"{nearest[0].isoformat()}, is shown.",)


def _values(bars: list[dict], key: str) -> list[float]:
    return [float(b[key]) for b in bars if isinstance(b.get(key), (int, float))]
