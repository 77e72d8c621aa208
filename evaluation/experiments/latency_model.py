"""The g4dn profiles' time per batch of 16, projected from a traced CPU run of the real pipeline (the command line is
scripts/latency_model.py, whose docstring states what is traced and how each stage is projected): `g4dn` (vLLM,
tensor parallel over the four T4s) and `g4dn-hf` (transformers + peft, the layers split over them).

`trace` runs `local_evaluation.py` on the CPU models with the g4dn profile's prompt shapes (`g4dn_shapes`) and an
unbounded budget, so every LLM call is recorded in the traces. `project` replays a traced run's first 16 questions
through `models/latency.py` on 4x T4 (`llm_latency`: the profile's backend): each LLM stage as traced and in the worst case (`llm_stages`), the routing
prompt, the web work (`web_work`) and the KG calls (`kg_calls`), against the batch deadline (`budget_s`);
`project_runs` prints the projections (`print_projection`, `print_dev_set_projection`) and returns the exit
status, 1 when a task misses the headroom bar.
"""
from __future__ import annotations

import json
import math
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import yaml

from evaluation.experiments.grid import command
from evaluation.sets import Suite
from evaluation.run_dir import RunDir
from models.config import REPO_ROOT, load_config
from models.deadline import Deadline, batch_deadline_s
from models.latency import (BGE_BASE, BGE_RERANKER_V2_M3, FMA_FRACTION_RANGE, Calibration, EncoderLatency, Efficiency,
                            HFCosts, HFLatency, LLMLatency, calibrate)

DEV_QUESTIONS = 2706  # CRAG's public Task 1-2 dev set (Task 3 asks the same questions with 50 pages each)
BATCH = 16
HEADROOM_BAR = 0.30
G4DN_GPUS = 4  # a g4dn.12xlarge's T4s
PROFILES = ("g4dn", "g4dn-hf")
KG_CALL_S = 0.050
PER_QUESTION_S = 30.0  # the grader's time per question (CRAG: 30 s; a batch of 16 gets 16 x 30 s)
CHARS_PER_TOKEN = 4
ROUTER_OUTPUT_TOKENS = 4
ANSWER_TEMPLATE_TOKENS = 300  # the answer prompts' instructions, question and query time around the context


def budget_s(config=None) -> float:
    """The runtime deadline of a batch of 16 under the g4dn profile (`models.deadline.batch_deadline_s`, the
    figure `CragModel` runs under): 16 x 30 s less its margin, 460 s of the grader's 480."""
    p = (config or load_config("g4dn")).pipeline
    return batch_deadline_s(BATCH, p.per_question_budget_s, p.deadline_margin_s)


def g4dn_shapes() -> dict:
    """The g4dn profile's keys that shape prompts and token counts, applied to the CPU profile for the trace."""
    g = load_config("g4dn")
    return {
        "pipeline.batch_size": BATCH, "pipeline.per_question_budget_s": 100000.0,
        "pipeline.answer_max_new_tokens": g.pipeline.answer_max_new_tokens,
        "web.recall_k": g.web.recall_k, "web.rerank_k": g.web.rerank_k,
        "web.context_max_tokens": g.web.context_max_tokens,
        "web.parent_chunk_size": g.web.parent_chunk_size, "web.child_chunk_size": g.web.child_chunk_size,
        "kg.icl_k": g.kg.icl_k, "kg.api_prompt": g.kg.api_prompt, "kg.api_max_new_tokens": g.kg.api_max_new_tokens,
        "public_data.top_facts": g.public_data.top_facts,
    }


def trace(task: int, data: str, out: Path | str = "", limit: int = 0) -> int:
    """A CPU run of `data` with the g4dn shapes; writes the run and `latency_run.json` (task, data) into `out` (by
    default a new temporary folder)."""
    out = Path(out or tempfile.mkdtemp(prefix=f"latency-t{task}-"))
    out.mkdir(parents=True, exist_ok=True)
    raw = yaml.safe_load((REPO_ROOT / "models" / "profiles" / "cpu.yaml").read_text(encoding="utf-8"))
    for dotted, value in g4dn_shapes().items():
        section, key = dotted.split(".")
        raw.setdefault(section, {})[key] = value
    raw["name"] = "cpu-with-g4dn-shapes"
    profile = out / "profile.yaml"
    profile.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    (out / "latency_run.json").write_text(json.dumps({"task": task, "data": data}), encoding="utf-8")
    cmd = command(Suite(data, task), profile, out, limit=limit, fresh=True)
    return subprocess.run(cmd, check=False).returncode  # local_evaluation.py is the floor above this package


# ---------------------------------------------------------------------------------------------- projection
def read_run(run: Path) -> tuple[dict, list[dict]]:
    manifest = json.loads((run / "latency_run.json").read_text(encoding="utf-8"))
    rows = RunDir(run).records()
    return manifest, rows


def batch_of(rows: list[dict], size: int = BATCH) -> list[dict]:
    """The first `size` rows, repeated in order when the run has fewer."""
    if not rows:
        raise ValueError("the run has no predictions")
    return [rows[i % len(rows)] for i in range(size)]


def stage_caps(config) -> dict[str, int]:
    """Each traced LLM stage's token cap in the g4dn profile, by the stage name's leading word."""
    return {"answer": config.pipeline.answer_max_new_tokens, "kg": config.kg.api_max_new_tokens,
            "public": 32, "check": 8, "verify": 8}


def g4dn_adapter(stage: str, config) -> str | None:
    """The adapter the g4dn profiles run a traced stage with (the CPU trace runs most stages on the base model):
    the KG program writer's, the KG answer's, the web answer's; None for the base model's stages."""
    words = stage.split()
    if words[0] == "kg":
        return config.kg.api_adapter
    if words[0] == "answer":
        return config.pipeline.kg_answer_adapter if words[-1] == "answer_kg" else config.pipeline.answer_adapter
    return None


def llm_stages(batch: list[dict], caps: dict[str, int], context_tokens: int = 0, config=None) -> dict[str, dict]:
    """stage -> prompt lengths, traced output lengths, and the worst case (one batched call per stage): outputs
    at their caps and, for answer stages, prompts with the whole `context_tokens` budget filled; with `config`, each
    request's adapter under that profile (`g4dn_adapter`) and its draws (n)."""
    stages: dict[str, dict] = defaultdict(lambda: {"prompts": [], "outputs": [], "caps": [], "prompt_caps": [],
                                                   "adapters": [], "draws": []})
    for row in batch:
        for call in (row.get("trace") or {}).get("llm_calls", []):
            stage = stages[call["stage"]]
            stage["adapters"].append(g4dn_adapter(call["stage"], config) if config is not None else None)
            stage["draws"].append(int(call.get("n") or 1))
            output, prompt = int(call.get("output_tokens") or 0), int(call.get("prompt_tokens") or 0)
            stage["prompts"].append(prompt)
            stage["outputs"].append(output)
            word = call["stage"].split()[0].lower()
            stage["caps"].append(max(output, caps.get(word, output)))
            stage["prompt_caps"].append(max(prompt, context_tokens + ANSWER_TEMPLATE_TOKENS) if word == "answer"
                                        else prompt)
    return dict(stages)


def router_prompts(batch: list[dict], tokenizer) -> list[int]:
    from models.llm.prompts import PromptLibrary

    template = PromptLibrary().get("domain")
    lengths = []
    for row in batch:
        messages = template.render(query=row.get("query", ""))
        lengths.append(len(tokenizer.encode(" ".join(m["content"] for m in messages))))
    return lengths


def web_work(batch: list[dict], examples: dict[str, dict], config) -> dict:
    """Parsing seconds (timed here), children and parents per query, with the g4dn web settings."""
    from models.types import Query
    from models.web.retriever import WebRetriever

    class SearchOrder:  # Task-3 preselection order does not change how much is parsed and scored
        def score_many(self, items):
            return [[-rank for rank in range(len(snippets))] for _, snippets in items]

    retriever = WebRetriever(config.web, embedder=None, reranker=SearchOrder())
    task = int(config.pipeline.task)
    out = {"parse_s": 0.0, "child_tokens": [], "pairs": [], "snippet_pairs": [], "queries": 0}
    for row in batch:
        example = examples.get(row.get("interaction_id"))
        if example is None:
            continue
        query = Query.from_crag(example)
        unbounded = Deadline(None)  # measuring the work itself: nothing may be skipped
        [selection] = retriever._select([query], task, unbounded)
        started = time.process_time()
        documents, _ = retriever._documents(query, selection, task, unbounded)
        corpus = retriever._split(query, documents, task)
        out["parse_s"] += time.process_time() - started
        query_tokens = len(query.text) // CHARS_PER_TOKEN + 1
        out["queries"] += 1
        out["child_tokens"] += [len(c) // CHARS_PER_TOKEN + 1 for c in corpus.children] + [query_tokens]
        recalled = sorted(corpus.parents, key=lambda p: -len(p.text))[:config.web.recall_k]
        out["pairs"] += [query_tokens + len(p.text) // CHARS_PER_TOKEN + 1 for p in recalled]
        if task == 3 and selection.snippet_only:
            from models.web.pages import snippet_document

            out["snippet_pairs"] += [query_tokens + len(snippet_document(p)) // CHARS_PER_TOKEN + 1
                                     for p in list(selection.full) + list(selection.snippet_only)]
    return out


def kg_calls(batch: list[dict]) -> int:
    calls = 0
    for row in batch:
        kg = (row.get("trace") or {}).get("kg") or {}
        calls += int(kg.get("api_calls") or len(kg.get("statements") or ()) or (1 if kg.get("program") else 0))
    return calls


def llm_latency(profile: str = "g4dn", efficiency: Efficiency = Efficiency(), hf_costs: HFCosts = HFCosts()) -> LLMLatency:
    """The LLM time model of a g4dn profile's backend on the grader's four T4s: vLLM's tensor parallelism (its
    Triton attention and LoRA kernels), or transformers + peft with the layers split over the cards (`HFLatency`)."""
    llm = load_config(profile).llm
    if llm.backend == "hf":
        return HFLatency(cards=G4DN_GPUS, max_batch_size=llm.max_batch_size, efficiency=efficiency, costs=hf_costs)
    return LLMLatency(tensor_parallel=llm.tensor_parallel_size, efficiency=efficiency)


def load_calibration(path: str | Path | None) -> Calibration:
    """The constants of a `scripts/gpu_bench.py` run (`models.latency.calibrate`), or the assumed ones without one."""
    if not path:
        return Calibration(Efficiency(), HFCosts(), ("no calibration run: every efficiency and host cost is the "
                                                     "stated assumption of models/latency.py",))
    return calibrate(json.loads(Path(path).read_text(encoding="utf-8")))


def per_question(result: dict) -> dict:
    """A batch's worst case per question, and its margins: to the grader's 30 s a question and to the runtime
    deadline of the whole batch."""
    worst = result["worst_s"] / BATCH
    return {"worst_per_question_s": worst, "margin_per_question_s": PER_QUESTION_S - worst,
            "margin_batch_s": result["budget_s"] - result["worst_s"]}


def project(run: Path, tokenizer, llm: LLMLatency, profile: str = "g4dn",
            encoder_efficiency: Efficiency = Efficiency()) -> dict:
    from evaluation.data import load_examples

    manifest, rows = read_run(run)
    config = load_config(profile, {"pipeline.task": manifest["task"]})
    batch = batch_of(rows)
    examples = {e["interaction_id"]: e for e in load_examples(manifest["data"])}
    stages: dict[str, tuple[float, float]] = {}
    route = router_prompts(batch, tokenizer)
    seconds = llm.stage_seconds(route, [ROUTER_OUTPUT_TOKENS] * len(route), [None] * len(route))
    stages["route (LLM, base model)"] = (seconds, seconds)
    traced_llm = llm_stages(batch, stage_caps(config), config.web.context_max_tokens, config)
    for name, s in traced_llm.items():
        label = (f"llm: {name} ({len(s['prompts'])} req, prompt median {int(statistics.median(s['prompts']))}, "
                 f"worst {max(s['prompt_caps'])})")
        stages[label] = (llm.stage_seconds(s["prompts"], s["outputs"], s["adapters"], s["draws"]),
                         llm.stage_seconds(s["prompt_caps"], s["caps"], s["adapters"], s["draws"]))
    if not any(name.split()[0].lower() == "answer" for name in traced_llm):
        # the traced questions were answered without the answer step (a KG value): any question the KG misses
        # falls back to it, so the worst case still pays one full answer call
        prompt = config.web.context_max_tokens + ANSWER_TEMPLATE_TOKENS
        stages[f"llm: answer (not traced; worst case every question falls back to the web, prompt {prompt})"] = (
            0.0, llm.stage_seconds([prompt] * BATCH, [config.pipeline.answer_max_new_tokens] * BATCH,
                                   [config.pipeline.answer_adapter] * BATCH))
    web = web_work(batch, examples, config)
    stages["web: parse + chunk (host CPU, one core)"] = (web["parse_s"], web["parse_s"])
    embed = EncoderLatency(BGE_BASE, efficiency=encoder_efficiency).seconds(web["child_tokens"])
    stages[f"web: embed {len(web['child_tokens'])} chunks (bge-base)"] = (embed, embed)
    rerank = EncoderLatency(BGE_RERANKER_V2_M3, efficiency=encoder_efficiency).seconds(web["pairs"] + web["snippet_pairs"])
    stages[f"web: rerank {len(web['pairs']) + len(web['snippet_pairs'])} pairs (bge-reranker-v2-m3)"] = (rerank, rerank)
    if manifest["task"] in (2, 3):
        calls, most = kg_calls(batch), BATCH * config.kg.max_calls_per_question
        stages[f"kg: {calls} API calls traced, at most {most}"] = (calls * KG_CALL_S, max(calls, most) * KG_CALL_S)
    traced = sum(s[0] for s in stages.values())
    worst = sum(s[1] for s in stages.values())
    budget = budget_s(config)
    return {"run": str(run), "profile": profile, "task": manifest["task"], "questions": len(rows), "stages": stages,
            "traced_s": traced, "worst_s": worst, "budget_s": budget, "headroom": 1 - worst / budget}


def _tokenizer():
    from transformers import AutoTokenizer

    from models.llm.checkpoint import resolve_checkpoint

    cpu = load_config("cpu")
    return AutoTokenizer.from_pretrained(resolve_checkpoint(cpu.llm.path, cpu.models_dir, cpu.llm.cache_dir))


def print_projection(result: dict) -> None:
    print(f"\n{result['profile']}, Task {result['task']} ({result['run']}, {result['questions']} traced questions -> "
          f"a batch of {BATCH})")
    print("| stage | as traced (s) | worst case (s) |\n|---|---|---|")
    for name, (traced, worst) in result["stages"].items():
        print(f"| {name} | {traced:.2f} | {worst:.2f} |")
    print(f"| **batch of {BATCH}** | **{result['traced_s']:.1f}** | **{result['worst_s']:.1f}** of "
          f"{result['budget_s']:.0f} "
          f"(headroom {result['headroom']:.0%}) |")


def dev_set_hours(result: dict, questions: int, servers: int) -> tuple[float, float]:
    """(as traced, worst case) hours for `questions` in batches of BATCH spread evenly over `servers` g4dn machines
    (`local_evaluation.py --ray` with one worker per server, or `--profile g4dn-server` per server)."""
    batches = math.ceil(questions / BATCH)
    per_server = math.ceil(batches / max(1, servers))
    return per_server * result["traced_s"] / 3600, per_server * result["worst_s"] / 3600


def print_dev_set_projection(results: list[dict], questions: int, servers: list[int]) -> None:
    print(f"\nFull data set: {questions} questions in batches of {BATCH}, hours as traced / worst case")
    print("| profile | task | " + " | ".join(f"{n} server{'s' if n > 1 else ''}" for n in servers) + " |")
    print("|---|---|" + "---|" * len(servers))
    for r in results:
        cells = [dev_set_hours(r, questions, n) for n in servers]
        print(f"| {r['profile']} | {r['task']} | " + " | ".join(f"{t:.2f} / {w:.2f}" for t, w in cells) + " |")


def describe(llm: LLMLatency) -> str:
    if isinstance(llm, HFLatency):
        return (f"transformers + peft, layers split over {llm.cards} cards (device_map auto), "
                f"at most {llm.max_batch_size} rows per generate call; cuBLAS GEMMs and PyTorch attention on the "
                f"tensor cores, {llm.costs.step_overhead_s * 1e3:.1f} ms host work per step, peft "
                f"+{llm.costs.peft_step_overhead_s * 1e3:.1f} ms")
    return (f"vLLM, tensor parallel {llm.tp}; cuBLAS GEMMs on the tensor cores, Triton attention and LoRA at "
            f"{llm.kernel_rate / 1e12:.2f} TFLOP/s per GPU (FMA, {llm.eff.fma_fraction:.0%} of the fp32 peak)")


def print_summary(results: list[dict]) -> None:
    print("\n| profile | task | as traced (s) | worst case (s) | worst case, Triton FMA band (s) | worst per question "
          "(s) | margin to 30 s a question | margin to the batch deadline |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        q = per_question(r)
        band = (f"{r['band'][0]:.1f} - {r['band'][1]:.1f}" if r.get("band") else "n/a (no Triton kernels)")
        print(f"| {r['profile']} | {r['task']} | {r['traced_s']:.1f} | {r['worst_s']:.1f} | {band} | "
              f"{q['worst_per_question_s']:.2f} | {q['margin_per_question_s']:.1f} s | {q['margin_batch_s']:.0f} s "
              f"({r['headroom']:.0%}) |")


def project_runs(runs: list[str], dev_questions: int = DEV_QUESTIONS, servers: str = "1,2,4,8",
                 profiles: Sequence[str] = PROFILES, calibration: str | Path | None = None) -> int:
    """Projects each traced run onto 4x T4 under each profile and prints it (with `dev_questions`, the whole data
    set on each comma-separated count of `servers`), with the constants of `calibration` (a scripts/gpu_bench.py
    JSON) where given; vLLM's worst case also at both ends of `FMA_FRACTION_RANGE`. Returns 1 when a task's
    worst-case headroom is under the bar under a profile, else 0."""
    g4dn = load_config("g4dn")
    p = g4dn.pipeline
    calibrated = load_calibration(calibration)
    print(f"4x T4, fp16; constants and sources: models/latency.py; "
          f"budget {budget_s(g4dn):.0f} s per batch of {BATCH} (the runtime deadline: {BATCH} x "
          f"{p.per_question_budget_s:g} s less the {p.deadline_margin_s:g} s margin); bar: headroom >= {HEADROOM_BAR:.0%} in the worst case")
    print(f"calibration: {calibration or 'none'}")
    for note in calibrated.notes:
        print(f"- {note}")
    tokenizer = _tokenizer()
    results = []
    for profile in profiles:
        llm = llm_latency(profile, calibrated.efficiency, calibrated.hf_costs)
        print(f"\n## {profile}: {describe(llm)}")
        for run in runs:
            result = project(Path(run), tokenizer, llm, profile, calibrated.efficiency)
            if llm.triton_kernels:
                result["band"] = tuple(
                    project(Path(run), tokenizer, llm_latency(profile, replace(calibrated.efficiency, fma_fraction=f),
                                                              calibrated.hf_costs), profile,
                            calibrated.efficiency)["worst_s"] for f in FMA_FRACTION_RANGE[::-1])
            results.append(result)
            print_projection(result)
    print_summary(results)
    if dev_questions:
        print_dev_set_projection(results, dev_questions, [int(n) for n in servers.split(",")])
    failing = [f"{r['profile']} Task {r['task']}" for r in results if r["headroom"] < HEADROOM_BAR]
    print(f"\nbar {'met' if not failing else 'MISSED for ' + ', '.join(failing)}: "
          + ", ".join(f"{r['profile']} Task {r['task']} {r['headroom']:.0%}" for r in results))
    return 1 if failing else 0
