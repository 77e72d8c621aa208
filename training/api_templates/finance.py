"""Finance templates: prices (daily and one-minute), dividends, market data and company names.

A stock is asked by its ticker or by its company name, alternately (CRAG's users write both: "aapl", "apple");
the program passes the same words, which the API resolves (`models/kg/apis/finance.py`). The example names
both, so a held-out company is held out under either name.
"""
from __future__ import annotations

import re
from collections import Counter
from datetime import date, timedelta
from typing import Iterable, Iterator, TypeVar

from training.api_templates.base import DomainTable, Filling, FixtureKG, low, pt

FINANCE = DomainTable("finance")
A = TypeVar("A", bound=tuple)

_LISTING_SUFFIX = re.compile(r"\s+(common stock|common shares|class [a-z]\b|capital stock).*$", re.IGNORECASE)
_LEGAL_SUFFIX = re.compile(r",?\s+(inc\.?|corporation|incorporated|company \(the\)|& co\.)$", re.IGNORECASE)


def short_company_name(listed: str) -> str:
    """The name a user types: "Apple Inc. Common Stock" -> "apple", "Coca-Cola Company (The)" -> "coca-cola"."""
    return _LEGAL_SUFFIX.sub("", _LISTING_SUFFIX.sub("", listed)).strip().lower()


def companies(kg: FixtureKG) -> Iterator[tuple[str, dict]]:
    """(short name, listing) for listings whose short name is their own (not both Alphabet share classes)."""
    short = Counter(short_company_name(row["Name"]) for row in kg.companies)
    for row in kg.companies:
        if short[short_company_name(row["Name"])] == 1:
            yield short_company_name(row["Name"]), row


def _names(kg: FixtureKG) -> dict[str, str]:
    """ticker -> the company's short name, where the name finds that ticker alone."""
    return {row["Symbol"]: name for name, row in companies(kg)}


def alternating(kg: FixtureKG, asks: Iterable[A]) -> Iterator[tuple[str, tuple[str, ...], A]]:
    """(words, entities, ask) for each ask, a tuple whose first item is a ticker. The words ask for the stock by
    its ticker on the even asks and by its company's short name on the odd ones (where the name finds that ticker
    alone), so a template's questions alternate the two ways; the entities name both."""
    names = _names(kg)
    for n, ask in enumerate(asks):
        ticker, name = ask[0], names.get(ask[0])
        yield (name if name and n % 2 else low(ticker)), (low(ticker),) + ((name,) if name else ()), ask


_PRICE_DAYS = ("2024-01-10", "2024-02-07", "2024-02-26", "2024-02-28", "2024-03-04", "2024-03-13")


def _bars(kg: FixtureKG) -> dict[tuple[str, str], dict]:
    return {(row["ticker"], row["date"]): row for row in kg.prices}


def _price_on_day(column: str, cast=float):
    def fill(kg: FixtureKG):
        bars = _bars(kg)
        asks = [(ticker, day) for ticker in sorted({t for t, _ in bars}) for day in _PRICE_DAYS
                if (ticker, day) in bars]
        for name, entities, (ticker, day) in alternating(kg, asks):
            yield Filling({"ticker": name, "date": day}, entities, (cast(bars[ticker, day][column]),))
    return fill


_PRICE_QUESTIONS = {
    "open": (("what was the opening price of {ticker} on {date}", "what did {ticker} open at on {date}",
              "{ticker} open price {date}", "what was {ticker}'s open on {date}"),
             ("at what price did {ticker} start trading on {date}",), False),
    "close": (("what was the closing price of {ticker} on {date}", "what did {ticker} close at on {date}",
               "{ticker} closing price {date}", "how did {ticker} stock close on {date}"),
              ("where did {ticker} shares finish on {date}",), False),
    "high": (("what was the highest price of {ticker} on {date}", "how high did {ticker} go on {date}",
              "{ticker} daily high {date}", "what was {ticker}'s high on {date}"),
             ("what's the top price {ticker} traded at on {date}",), False),
    "low": (("what was the lowest price of {ticker} on {date}", "how low did {ticker} go on {date}",
             "{ticker} daily low {date}", "what was {ticker}'s low on {date}"),
            ("what's the bottom price {ticker} hit on {date}",), True),
}
for _column, (_questions, _unseen, _held) in _PRICE_QUESTIONS.items():
    FINANCE.template('get_stock_price("{ticker}", "{date}")["' + _column + '"]', *_questions, unseen=_unseen,
                     heldout=_held, name=f"price_{_column}")(_price_on_day(_column))
FINANCE.template('get_stock_price("{ticker}", "{date}")["volume"]',
                 "what was the trading volume of {ticker} on {date}", "how many {ticker} shares traded on {date}",
                 "{ticker} volume {date}", "how many shares of {ticker} changed hands on {date}",
                 unseen=("what was the number of {ticker} shares traded on {date}",),
                 name="price_volume")(_price_on_day("volume", int))


@FINANCE.template('get_stock_price("{ticker}", "yesterday")["close"]',
                  "what was the closing price of {ticker} yesterday", "how did {ticker} close yesterday",
                  "{ticker} close yesterday", "where did {ticker} end yesterday",
                  unseen=("yesterday's closing price for {ticker}, what was it",))
def _close_yesterday(kg: FixtureKG):
    bars = _bars(kg)
    days = [(date.fromisoformat(day), (date.fromisoformat(day) - timedelta(days=1)).isoformat())
            for day in ("2024-02-07", "2024-02-28", "2024-03-06", "2024-03-13")]
    asks = [(ticker, asked, yesterday) for ticker in sorted({t for t, _ in bars}) for asked, yesterday in days
            if (ticker, yesterday) in bars]
    for name, entities, (ticker, asked, yesterday) in alternating(kg, asks):
        yield Filling({"ticker": name}, entities, (float(bars[ticker, yesterday]["close"]),), pt(asked))


_MONTHS = {"2024-01": ("january 2024", "2024-01-01", "2024-01-31"),
           "2024-02": ("february 2024", "2024-02-01", "2024-02-29")}


def _month_closes(reduce):
    def fill(kg: FixtureKG):
        asks = []
        for ticker in sorted({row["ticker"] for row in kg.prices}):
            for month in _MONTHS:
                closes = [float(r["close"]) for r in kg.prices if r["ticker"] == ticker and r["date"].startswith(month)]
                if closes:
                    asks.append((ticker, month, closes))
        for name, entities, (_, month, closes) in alternating(kg, asks):
            words, start, end = _MONTHS[month]
            yield Filling({"ticker": name, "month": words, "start": start, "end": end}, entities, (reduce(closes),))
    return fill


FINANCE.template('AVG get_stock_price("{ticker}", "{start}", "{end}")["close"]',
                 "what was the average closing price of {ticker} in {month}",
                 "on average, where did {ticker} close in {month}", "{ticker} average close {month}",
                 "what's the mean daily close of {ticker} for {month}",
                 unseen=("averaged over {month}, what did {ticker} close at",),
                 name="month_average_close")(_month_closes(lambda closes: sum(closes) / len(closes)))
FINANCE.template('get_stock_price("{ticker}", "{start}", "{end}")\nsort(None, -close)["close"][:1]',
                 "what was the highest closing price of {ticker} in {month}",
                 "what was {ticker}'s best close in {month}",
                 "{ticker} highest close {month}", "what's the top close {ticker} had in {month}",
                 unseen=("in {month}, what was the peak closing price of {ticker}",), heldout=True,
                 name="month_highest_close")(_month_closes(max))


def _info_field(key: str):
    def fill(kg: FixtureKG):
        for name, entities, (_, info) in alternating(kg, sorted(kg.info.items())):  # counted whether asked or not
            if info.get(key) is not None:
                yield Filling({"ticker": name}, entities, (info[key],))
    return fill


FINANCE.template('get_stock_market_cap("{ticker}")["market_cap"]',
                 "what is the market cap of {ticker}", "how much is {ticker} worth on the stock market",
                 "{ticker} market cap", "what's the market capitalization of {ticker}",
                 unseen=("how big is {ticker} by market value",), name="market_cap")(_info_field("marketCap"))
FINANCE.template('get_stock_pe_ratio("{ticker}")["pe_ratio"]',
                 "what is the p/e ratio of {ticker}", "what is {ticker}'s price to earnings ratio", "{ticker} pe ratio",
                 "what's the pe of {ticker}",
                 unseen=("how many times earnings does {ticker} trade at",), name="pe_ratio")(_info_field("forwardPE"))
FINANCE.template('get_stock_eps("{ticker}")["eps"]',
                 "what are the earnings per share of {ticker}", "what is the eps of {ticker}", "{ticker} eps",
                 "how much does {ticker} earn per share",
                 unseen=("what's {ticker}'s per-share earnings",), heldout=True, name="eps")(_info_field("forwardEps"))

# get_stock_info keys (yfinance names): (program key, trained phrasings, unseen phrasings, held out)
_INFO = {
    "sector": (("what sector is {ticker} in", "which sector does {ticker} belong to", "{ticker} sector",
                "what's the sector of {ticker}"), ("in what part of the economy does {ticker} operate",), False),
    "industry": (("what industry is {ticker} in", "what is the industry of {ticker}", "{ticker} industry",
                  "what kind of business is {ticker}"), ("what line of business is {ticker} in",), False),
    "exchange": (("which exchange is {ticker} listed on", "where does {ticker} trade", "{ticker} stock exchange",
                  "what exchange is {ticker} on"), ("on which market is {ticker} listed",), False),
    "currency": (("what currency does {ticker} trade in", "{ticker} trading currency",
                  "in what currency is {ticker} priced"), ("what money are {ticker} shares quoted in",), False),
    "longName": (("what's the full company name of {ticker}", "what is {ticker}'s long name",
                  "{ticker} full name"), ("what company does the symbol {ticker} stand for",), False),
    "previousClose": (("what was {ticker}'s previous close", "what's the previous closing price of {ticker}",
                       "{ticker} previous close"), ("what did {ticker} close at last session",), False),
    "currentPrice": (("what's the current price of {ticker}", "how much is {ticker} trading at right now",
                      "{ticker} stock price now", "what is {ticker} stock at"),
                     ("what does one share of {ticker} cost at the moment",), False),
    "volume": (("what's {ticker}'s trading volume today", "how many {ticker} shares traded today",
                "{ticker} volume today"), ("how busy was trading in {ticker} today, in shares",), False),
    "trailingPE": (("what's the trailing pe of {ticker}", "{ticker} trailing p/e",
                    "what is {ticker}'s trailing price to earnings"), ("what's {ticker}'s p/e over the last year",),
                   False),
    "trailingEps": (("what's the trailing eps of {ticker}", "{ticker} trailing earnings per share",
                     "what did {ticker} earn per share over the last twelve months"),
                    ("what's {ticker}'s ttm eps",), False),
    "dividendRate": (("what's the annual dividend of {ticker}", "how much dividend does {ticker} pay a year",
                      "{ticker} dividend rate"), ("what's {ticker}'s yearly payout per share",), False),
    "dividendYield": (("what's the dividend yield of {ticker}", "{ticker} dividend yield",
                       "how much does {ticker} yield"), ("what percent does {ticker} pay out in dividends",), True),
    "fiftyTwoWeekHigh": (("what's the 52 week high of {ticker}", "{ticker} 52-week high",
                          "how high has {ticker} been in the last year"),
                         ("what's the highest {ticker} traded in the past 52 weeks",), False),
    "fiftyTwoWeekLow": (("what's the 52 week low of {ticker}", "{ticker} 52-week low",
                         "how low has {ticker} been in the last year"),
                        ("what's the lowest {ticker} traded in the past 52 weeks",), True),
}
for _key, (_questions, _unseen, _held) in _INFO.items():
    FINANCE.template('get_stock_info("{ticker}")["' + _key + '"]', *_questions, unseen=_unseen, heldout=_held,
                     name=f"info_{_key}")(_info_field(_key))


def _dividend_payers(kg: FixtureKG) -> list[tuple[str]]:
    return [(ticker,) for ticker in sorted({row["ticker"] for row in kg.dividends})]


@FINANCE.template('get_stock_dividend("{ticker}")\nsort(None, -date)["date"][:1]',
                  "when did {ticker} last pay a dividend", "what was the date of {ticker}'s most recent dividend",
                  "{ticker} last dividend date", "when was {ticker}'s latest dividend paid",
                  unseen=("what day did {ticker} most recently pay shareholders a dividend",))
def _last_dividend_date(kg: FixtureKG):
    for name, entities, (ticker,) in alternating(kg, _dividend_payers(kg)):
        paid = [row["date"] for row in kg.dividends if row["ticker"] == ticker]
        # asked after the last dividend of the fixture: the API lists future ones
        yield Filling({"ticker": name}, entities, (max(paid),), pt(date(2024, 3, 15)))


@FINANCE.template('get_stock_dividend("{ticker}")\nsort(None, -date)["dividend"][:1]',
                  "how much was {ticker}'s last dividend", "what was the most recent dividend of {ticker} per share",
                  "{ticker} latest dividend amount", "what did {ticker} pay in its last dividend",
                  unseen=("how big was the latest dividend {ticker} paid out",))
def _last_dividend_amount(kg: FixtureKG):
    for name, entities, (ticker,) in alternating(kg, _dividend_payers(kg)):  # counted whether asked or not
        rows = sorted((row["date"], float(row["amount"])) for row in kg.dividends if row["ticker"] == ticker)
        if len(rows) < 2 or rows[-1][0] != rows[-2][0]:
            yield Filling({"ticker": name}, entities, (rows[-1][1],), pt(date(2024, 3, 15)))


@FINANCE.template('get_stock_dividend("{ticker}", [ge(date, "2023-01-01"), le(date, "2023-12-31")])["len"]',
                  "how many dividends did {ticker} pay in 2023", "how many times did {ticker} pay a dividend in 2023",
                  "{ticker} number of dividends 2023", "count of {ticker} dividend payments in 2023",
                  unseen=("in 2023, how often did {ticker} pay out a dividend",), name="dividends_2023")
def _dividends_in_2023(kg: FixtureKG):
    for name, entities, (ticker,) in alternating(kg, _dividend_payers(kg)):  # counted whether asked or not
        count = sum(row["ticker"] == ticker and row["date"].startswith("2023") for row in kg.dividends)
        if count:
            yield Filling({"ticker": name}, entities, (count,))


@FINANCE.template('get_company_names("{company}")["ticker"][:1]',
                  "what is the ticker symbol of {company}", "under which ticker does {company} trade",
                  "{company} stock symbol", "what's {company}'s ticker",
                  unseen=("what letters is {company} listed under",), name="company_ticker")
def _company_ticker(kg: FixtureKG):
    for name, row in companies(kg):
        yield Filling({"company": name}, (name,), (row["Symbol"],))


@FINANCE.template('get_company_names("{company}")["name"][:1]',
                  "what is the full listed name of {company}",
                  "what is {company}'s official company name on the exchange",
                  "{company} listed name", "what's the registered stock name of {company}",
                  unseen=("how is {company} named on the stock exchange",), name="company_listed_name")
def _company_listed_name(kg: FixtureKG):
    for name, row in companies(kg):
        yield Filling({"company": name}, (name,), (row["Name"],))


_MINUTE_BARS_PER_DAY = 390  # 09:30-15:59 Eastern, one bar a minute
_MINUTES_ASKED_ON = date(2024, 3, 1)  # after the five sessions of one-minute history (to 2024-02-28)


def _minute_days(kg: FixtureKG) -> list[str]:
    return sorted({row["date"] for row in kg.prices if row["date"] <= "2024-02-28"})[-5:]


def _minute_asks(kg: FixtureKG, days: list[str]) -> list[tuple[str, str]]:
    return [(ticker, day) for ticker in sorted({row["ticker"] for row in kg.prices}) for day in days]


@FINANCE.template('get_stock_minute_prices("{ticker}", "{date}")["len"]',
                  "how many one-minute price bars does {ticker} have for {date}",
                  "for how many minutes was {ticker} traded on {date}", "{ticker} number of minute bars {date}",
                  "how many minutes of {ticker} price data are there for {date}",
                  unseen=("count the per-minute {ticker} quotes on {date}",), name="minute_bar_count")
def _minute_bar_count(kg: FixtureKG):
    for name, entities, (_, day) in alternating(kg, _minute_asks(kg, _minute_days(kg)[::2])):
        yield Filling({"ticker": name, "date": day}, entities, (_MINUTE_BARS_PER_DAY,), pt(_MINUTES_ASKED_ON))


@FINANCE.template('get_stock_minute_prices("{ticker}", "{date}")\nsort(None, -high)["high"][:1]',
                  "what was the highest one-minute price of {ticker} on {date}",
                  "looking at minute-by-minute prices, how high did {ticker} go on {date}",
                  "{ticker} intraday minute high {date}", "top minute bar high of {ticker} on {date}",
                  unseen=("minute by minute, what was the peak {ticker} reached on {date}",), name="minute_high")
def _minute_high(kg: FixtureKG):
    bars = _bars(kg)  # the one-minute path passes through the day's high (data/kg_fixture/README.md)
    for name, entities, (ticker, day) in alternating(kg, _minute_asks(kg, _minute_days(kg)[1::2])):
        yield Filling({"ticker": name, "date": day}, entities, (float(bars[ticker, day]["high"]),),
                      pt(_MINUTES_ASKED_ON))
