"""The submission's own folder: the grader's JSON files (`aicrowd.task{1,2,3}.json`, one is copied to `aicrowd.json`
at the repository root for the task you submit to) and the checks run before a submission is tagged or trusted:
`preflight` (what the grader's image and run need, checked without a GPU: `make preflight`) and `gpu_smoke` (the
GPU acceptance check, the first thing to run on a CUDA machine). Never imported at inference.
"""
