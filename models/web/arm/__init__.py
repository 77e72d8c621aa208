"""ARM retrieval (the ARM paper's part 1: information alignment), `web.retriever: arm`.

    pages -> objects (text chunks, tables split by rows, serialised with the page title) -> n-gram index ->
    keywords (`keywords`) -> each rewritten as index n-grams under a decoding constraint (`alignment`) ->
    score = w * BM25 over each keyword's n-grams + (1 - w) * question-object cosine (`retriever`) -> top objects

Modules: `ngrams` (the index), `keywords`, `alignment` (the constrained rewrite), `retriever`. Nothing is
imported here, so `models.web.config` can read `arm.config` without loading the retriever.
"""
