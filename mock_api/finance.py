"""Finance domain: `finance/company_name.dict` (a CSV, `,Name,Symbol`) and five SqliteDict files keyed by ticker.

Company names are searched with BM25 (one document per name, in file order, as the official server does);
`get_ticker_by_name` needs the exact `Name`; every other route takes a ticker and answers null for an unknown
one. The sqlite files are opened read-only, so serving a real KG never writes to it.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from sqlitedict import SqliteDict

from mock_api.layout import (FINANCE_COMPANIES, FINANCE_DETAILED, FINANCE_DIVIDEND, FINANCE_INFO,
                                     FINANCE_MARKETCAP, FINANCE_PRICE, KGDataError, require)
from mock_api.routes import Route, TextQuery
from mock_api.search import NameSearch, OkapiIndex


class FinanceKG:
    def __init__(self, kg_dir: str | Path):
        companies = pd.read_csv(require(kg_dir, FINANCE_COMPANIES), dtype=str, keep_default_na=False)
        if not {"Name", "Symbol"} <= set(companies.columns):
            raise KGDataError(f"{FINANCE_COMPANIES}: expected a CSV with columns Name and Symbol")
        self.tickers: dict[str, str] = dict(zip(companies["Name"], companies["Symbol"]))
        self.search = NameSearch(self.tickers, OkapiIndex, dedupe=False)
        self._tables = {relative: SqliteDict(str(require(kg_dir, relative)), flag="r")
                        for relative in (FINANCE_PRICE, FINANCE_DETAILED, FINANCE_DIVIDEND, FINANCE_MARKETCAP,
                                         FINANCE_INFO)}

    def lookup(self, relative: str, ticker: str):
        """The stored value for `ticker` in one table, or None."""
        table = self._tables[relative]
        return table[ticker] if ticker in table else None

    def info_field(self, ticker: str, field: str):
        info = self.lookup(FINANCE_INFO, ticker)
        return info.get(field) if isinstance(info, dict) else None

    def close(self) -> None:
        for table in self._tables.values():
            table.close()

    def routes(self) -> list[Route]:
        def by_ticker(relative):
            return lambda body: self.lookup(relative, body.query)

        return [
            Route("/finance/get_company_name", TextQuery, lambda body: self.search.search(body.query)),
            Route("/finance/get_ticker_by_name", TextQuery, lambda body: self.tickers.get(body.query)),
            Route("/finance/get_price_history", TextQuery, by_ticker(FINANCE_PRICE)),
            Route("/finance/get_detailed_price_history", TextQuery, by_ticker(FINANCE_DETAILED)),
            Route("/finance/get_dividends_history", TextQuery, by_ticker(FINANCE_DIVIDEND)),
            Route("/finance/get_market_capitalization", TextQuery, by_ticker(FINANCE_MARKETCAP)),
            Route("/finance/get_eps", TextQuery, lambda body: self.info_field(body.query, "forwardEps")),
            Route("/finance/get_pe_ratio", TextQuery, lambda body: self.info_field(body.query, "forwardPE")),
            Route("/finance/get_info", TextQuery, by_ticker(FINANCE_INFO)),
        ]
