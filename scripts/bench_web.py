"""Benchmark of the web pathway against the naive CRAG-baseline retriever, on real CRAG questions.

    python scripts/bench_web.py [--data "$CRAG_DATA/dev_data.jsonl.bz2"] [--profile cpu] [--threads 1]

Per question, and as medians/totals, it prints for the configured pathway (and, for comparison, the same
pathway with the other extraction backend): extraction ms, chunk count, embedding ms, rerank ms, total ms
and answer-in-context recall; and for the naive reference measured in the same run (the official CRAG
baseline's retriever: bs4 `get_text` -> sentences -> the same embedder -> top-20 by cosine): extraction
ms, sentence count, embedding ms, total ms and recall; and, with `--sentence-chunks` (needs trafilatura and
blingfire), ElectricSheep's page processing measured the same way: trafilatura main content (the profile's
extractor as fallback and for tables) -> blingfire sentence groups + whole tables + snippets -> the same
embedder -> top `rerank_k` by cosine -> the same context budget (`es.*` columns).

How answer-in-context recall is counted. Several gold answers are sentences, and some short ones are
meaningless as substrings ("yes", "en", "nan"). Each question therefore gets *key strings*
(`evaluation.experiments.context_recall.answer_keys`, whose docstring states the rule): for a sentence-long gold answer one
key per fact it adds to the question; otherwise one key whose spellings are the gold answer and its alternatives
(found if any spelling is), keeping spellings of at most four words and three or more characters that are not
yes/no/nan/refusals; or, with `--answer-keys FILE` (a JSONL file of {"interaction_id", "answer_keys"} kept beside
the data, never in the repository), the keys written there. A key
counts only if it occurs in the text of at least one of the question's pages (otherwise no retriever can find it;
such keys are listed as unreachable). Recall = reachable keys found (case-insensitively) in the context / reachable
keys, where the context is exactly what the LLM would read (`format_context`, the profile's token budget,
counted with the grader's Llama tokenizer when `--tokenizer` exists, else whitespace words). The library is
`evaluation/bench/web.py`.
"""
from __future__ import annotations

import argparse

from evaluation.bench.web import bench_web
from models import crag_data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=crag_data.DEV_DATA)
    parser.add_argument("--answer-keys", default="", help="annotated keys per interaction_id (see above)")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (the targets are for one core)")
    parser.add_argument("--tokenizer", default=crag_data.GRADER_TOKENIZER, help="token counter for the context")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--task", type=int, default=1, choices=(1, 2, 3), help="3: snippet preselection of 50 pages")
    parser.add_argument("--sentence-chunks", action="store_true",
                        help="add ElectricSheep's trafilatura + sentence-group row (needs trafilatura, blingfire)")
    args = parser.parse_args(argv)
    bench_web(args.data, args.answer_keys, args.profile, args.threads, args.tokenizer, args.limit, args.task,
              args.sentence_chunks)


if __name__ == "__main__":
    main()
