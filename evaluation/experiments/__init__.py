"""Experiments over whole `local_evaluation.py` runs, behind scripts/ (never imported at inference): the grids of
runs (`grid`: the suites, each cell's command and the one rerun rule; `ablation`, `modes` (db3 vs omni),
`current_results` (the README's results table)), what is read from runs' traces (`context_recall`,
`attribute_accuracy`, `verifier_sweep` with `verify_saved`, `judge_agreement`) and the latency projection
(`latency_model`). The evaluator itself is the package above; `bench/` holds the benchmarks."""
