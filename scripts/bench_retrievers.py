"""Both web retrievers side by side, in one run and under the same context budget: db3's parent/child recall +
rerank (`web.retriever: parent_child`) and ARM's information alignment (`web.retriever: arm`, the ARM paper).

    python scripts/bench_retrievers.py [--data "$CRAG_DATA/dev_data.jsonl.bz2"] [--profile cpu] [--limit N]
                                       [--suites 5 50] [--sweep] [--output FILE.md]

Suites, both built from the real dev questions: `5` gives each question its own 5 pages (Task 1); `50` gives it
its own 5 plus the 45 pages of the other nine, shuffled with a fixed seed (the real-size Task-3 input of
scripts/bench_task3.py, ~15 MB of HTML per question), read as Task 3 (snippet preselection of 5 pages).

Rows: `parent_child` and `arm` as the profile sets them, `arm-unaligned` (the same keywords searched by their own
words: what the constrained rewrite adds) and `arm-objects` (each serialised object embedded whole, ARM's own
cosine, instead of the best child's). `--sweep` adds arm rows for other n-grams per keyword and candidate sets,
and sweeps the BM25/cosine weight and the number of objects on the scores of the `arm` row (no re-run: the
retriever keeps every object's two scores).

Per row: answer-in-context recall (reachable keys found in the context the LLM would read: `format_context` with
the profile's token budget and the grader's tokenizer; keys as scripts/bench_web.py counts them), perfect recall
(questions whose every reachable key is found), and CPU seconds per question (process time of `retrieve`, one
torch thread: what one dedicated core takes) against the web-retrieval budget of a CPU question. For arm rows
also: keywords aligned, n-grams written, and whether every n-gram is one of the question's index (it must be).
Rows `arm+structure` (ARM part 2 with the support verifier) and `arm+structure-llm` (the LLM verifier)
also report the MIP's solve time per draft and the compatibility time per question, apart from the total.
The library is `evaluation/bench/retrievers.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.bench.retrievers import SUITES, bench_retrievers
from models import crag_data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=crag_data.DEV_DATA)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--tokenizer", default=crag_data.GRADER_TOKENIZER, help="token counter for the context")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--suites", nargs="+", default=list(SUITES), choices=list(SUITES))
    parser.add_argument("--rows", nargs="+", default=None, help="only these rows (names as printed)")
    parser.add_argument("--sweep", action="store_true", help="more arm settings, and the weight x objects sweep")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--output", default=None, help="also write the tables to this Markdown file")
    args = parser.parse_args(argv)
    return bench_retrievers(args.data, args.profile, args.tokenizer, args.limit, args.suites, args.rows, args.sweep,
                            args.threads, args.output)


if __name__ == "__main__":
    sys.exit(main())
