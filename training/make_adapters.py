"""`make adapters`: the three LoRA adapters a GPU profile names, from a CRAG file and a base model, in one command.

    make adapters DATA=crag_task_1_and_2_dev_v4.jsonl.bz2 BASE=models/meta-llama/Meta-Llama-3-8B-Instruct
    python scripts/make_adapters.py --data FILE --base FOLDER [--server-url http://localhost:8001/v1 --server-model M]

Before any labelling, the KG check (`check_kg`, `training/kg_probe.py`): the first questions of the data are
probed, with no model, against the KG the run will label on; when it does not serve their entities (the bundled
fixture KG against CRAG's questions) `kg_answer` would have no training record, so the command stops there, naming
the fix (`$CRAG_MOCK_API_URL` set to the official mock API serving CRAG's KG), unless `--without-kg-answer`, which
says up front that `kg_answer` is skipped and why and trains `web_answer` and `api_generation` only. The check is
skipped when the steps that read the KG are done. An adapter left with no training record does not stop the others
(`api_generation` is still trained when `kg_answer` has none); the command then ends with an error. It ends with a
summary (`summary`): each adapter trained, kept (already trained for these inputs) or skipped, and why, before the
git-LFS lines, which name only the adapters it has.

Steps, each writing into its own folder of the work folder (`--work`, default `outputs/adapters/`):
1. `labels_web_answer`, `labels_kg_answer`: db3 §2.4 labels of the first `--limit` CRAG questions
   (`training.build_sft_data`: `make_builder`, `build`; the rules in `training/labels.py`), the contexts built by the
   web and KG pathways, p_basic answered and judged (`--judge llm`: p_check_gt / p_context) by the labelling model.
2. `api_templates`: the bundled KG's templates (`training.template_data.train_examples`: at most
   `--max-per-template` per template, each target executed against the mock API and kept when it gives its answer);
   `api_bootstrap`: the labelling model writes a program for each CRAG question (`training.bootstrap_api`, with the
   profile's request), executed against the mock API; `api_sft`: the SFT records of the API adapter
   (`training.api_data.to_sft_records`: the request the profile sends, its `kg.api_prompt` and `kg.icl_k`) from the
   kept templates, the bootstrapped programs that found facts, and the hand-written seed (`--extra`).
3. `train_<adapter>`: `training.train_lora.train` into the folder the profile's `llm.adapters` names (resolved
   against the models dir; `--adapters-dir DIR`: `DIR/<name>`), with its `training_log.json`; 4-bit only with
   `--qlora on`, else the base in fp16 with the loss scaler (T4) or bf16 (sm80+), train_lora's own choice.
Then the git-LFS lines that commit the adapters (`lfs_lines`).

The labelling model is the profile with `llm.path=BASE`, no adapters and `kg.api_adapter=null` (the data is built
on the base model), on `llm.backend` hf (on CUDA with `llm.device_map: auto`, the layers spread over the GPUs: the
8B in fp16 does not fit one T4) unless the profile's backend can be imported (vllm: on CUDA, or on CPU
through vLLM's CPU build, `make setup VLLM=1`, with a 1 GiB KV cache and no latency guard), or, with
`--server-url URL --server-model NAME`, an OpenAI-compatible server of BASE (e.g. `vllm serve BASE`) through the
`openai` backend, which still counts and fits prompts with BASE's tokenizer; that server is then also the judge.
The mock API is `$CRAG_MOCK_API_URL`, or else the bundled fixture KG served in-process for the data steps (the log
says so: KG contexts and API targets then come from the bundled KG, not CRAG's).

Resumable (`training/resumable.py`): a step whose done marker names the same inputs (data file, base, settings) is
skipped; an interrupted labelling or bootstrap step appends to what it wrote (the writers skip ids already done),
also when only `--limit` changed; an adapter folder holding `adapter_config.json`, `training_log.json` and a
`make_adapters.json` with the same fingerprint (training data, base, training settings) is not retrained. Nothing
loads a model unless a step needs it, so a rerun of a finished run takes seconds.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import Callable, Mapping, Sequence

from training.adapter_folders import adapter_dirs, lfs_lines
from training.adapter_settings import ADAPTERS, LABELLED, MakeAdaptersError, Settings
from training.labelling_session import MOCK_API_ENV, Session, default_device, labelling_overrides
from training.resumable import StepState, file_fingerprint, fingerprint, model_fingerprint, read_json, write_json

log = logging.getLogger(__name__)

MARKER = "make_adapters.json"  # in each adapter folder: the fingerprint it was trained for


def counts_text(counts: Mapping) -> str:
    return ", ".join(f"{value} {key}" if not isinstance(value, Mapping) else f"{key} {dict(value)}"
                     for key, value in counts.items())


# ---------------------------------------------------------------------------------------------- the command
class AdapterMaker:
    """Runs the steps of the module docstring for one `Settings`; `run()` returns each step's counts."""

    def __init__(self, settings: Settings, say: Callable[[str], None] = print, repo_root: Path | None = None):
        from models.config import REPO_ROOT, load_config

        self.settings = settings
        self.say = say
        self.repo_root = Path(repo_root or REPO_ROOT)
        self.work = Path(settings.work)
        self.device = settings.device or default_device()
        self.target = target = load_config(settings.profile, dict(settings.overrides))  # the profile trained for
        self.adapter_dirs = adapter_dirs(target, settings.adapters_dir)
        gpus = _cuda_devices() if self.device.startswith("cuda") else 0
        self.overrides = labelling_overrides(settings, target.llm, self.device, gpus=gpus)
        self.session = Session(settings.profile, self.overrides, say)
        # What the data steps depend on, known without starting anything (the mock API's port is left out).
        described = dataclasses.asdict(load_config(settings.profile, self.overrides | {"kg.api_url": "(mock API)"}))
        described["llm"]["path"] = "(BASE)"  # its fingerprint is an input of its own: spelt another way, the same
        described.pop("models_dir")
        self.described = described
        self.mock = os.environ.get(MOCK_API_ENV) or "bundled fixture KG"
        self.outcomes: dict[str, tuple[str, str]] = {}  # adapter -> (trained | kept | skipped, detail)

    @cached_property
    def data_fingerprint(self) -> dict:
        from models.paths import resolve_repo_path

        path = Path(self.settings.data)
        return file_fingerprint(path if path.exists() else resolve_repo_path(self.settings.data))

    @cached_property
    def base_fingerprint(self) -> dict:
        return model_fingerprint(self.settings.base)

    # ------------------------------------------------------------------ driving
    def run(self) -> dict:
        started = time.monotonic()
        results = {}
        skipped: dict[str, str] = {}  # adapter -> why it is not trained
        try:
            probe = self.check_kg()
            if probe is not None:
                results["kg_probe"] = probe.as_dict()
            if self.settings.without_kg_answer:
                skipped["kg_answer"] = "--without-kg-answer" + (f"; {probe.text()}" if probe is not None else "")
                self.say(f"kg_answer is skipped ({skipped['kg_answer']}): web_answer and api_generation are trained")
            for adapter in LABELLED:
                if adapter in skipped:
                    self.say(f"[labels_{adapter}] skipped: --without-kg-answer")
                    results[f"labels_{adapter}"] = {"skipped": "--without-kg-answer"}
                    continue
                results[f"labels_{adapter}"] = self.labels(adapter)
            results["api_templates"] = self.api_templates()
            results["api_bootstrap"] = self.api_bootstrap()
            results["api_sft"] = self.api_sft()
        finally:
            self.session.close()
        failed = []
        for adapter in ADAPTERS:
            if adapter in skipped:
                continue
            try:
                results[f"train_{adapter}"] = counts = self.train(adapter)
            except MakeAdaptersError as error:  # no training record: the other adapters are still trained
                self.say(f"[train_{adapter}] not trained: {error}")
                skipped[adapter], failed = str(error).removeprefix(f"{adapter}: "), failed + [adapter]
                continue
            self.outcomes.setdefault(adapter, ("trained", counts_text(counts)))
        for adapter, why in skipped.items():
            self.outcomes[adapter] = ("skipped", why)
        results["summary"] = {name: {"outcome": outcome, "detail": detail}
                              for name, (outcome, detail) in self.outcomes.items()}
        self.say(self.summary(time.monotonic() - started))
        present = {name: self.adapter_dirs[name] for name in ADAPTERS if self.outcomes[name][0] != "skipped"}
        gitignore = self.repo_root / ".gitignore"
        lines = lfs_lines(present, self.repo_root, gitignore.read_text() if gitignore.is_file() else "")
        if lines:
            self.say("to commit them with git-LFS (from the repository root):\n" + "\n".join(f"  {x}" for x in lines))
        results["lfs_lines"] = lines
        if failed:
            raise MakeAdaptersError(f"{', '.join(failed)} not trained (see the summary above): "
                                    + "; ".join(f"{name}: {skipped[name]}" for name in failed))
        return results

    def summary(self, seconds: float) -> str:
        """What the run trained, kept and skipped, one line an adapter, with where each went and why."""
        lines = [f"summary ({seconds:.1f} s): " + "; ".join(
            f"{outcome} {', '.join(n for n in ADAPTERS if self.outcomes[n][0] == outcome)}"
            for outcome in ("trained", "kept", "skipped") if any(o == outcome for o, _ in self.outcomes.values()))]
        for name in ADAPTERS:
            outcome, detail = self.outcomes[name]
            if outcome == "skipped":
                lines.append(f"  {name}: skipped: {detail}; a profile naming it runs that stage on the base model "
                             "with its in-context prompt (models/adapter_fallback.py)")
            else:
                what = "trained" if outcome == "trained" else "kept, already trained for these inputs"
                lines.append(f"  {name}: {what} -> {self.adapter_dirs[name]}" + (f" ({detail})" if detail else ""))
        return "\n".join(lines)

    def _done(self, name: str, inputs: Mapping) -> bool:
        return StepState(self.work / name, inputs).finished() is not None

    def probe(self):
        """The KG probe (training/kg_probe.py) of the questions to label, against the mock API the run uses."""
        from models.kg.client import MockAPIClient
        from training.kg_probe import probe_kg

        kg = f"the KG at ${MOCK_API_ENV}" if os.environ.get(MOCK_API_ENV) else \
            f"the bundled fixture KG (no ${MOCK_API_ENV})"
        with MockAPIClient(self.session.mock_url, timeout_s=10.0) as client:
            return probe_kg(self._questions(), client, kg)

    def check_kg(self):
        """Before labelling: whether the KG serves the data's entities (module docstring). Returns the probe (None
        when every step that reads the KG is done); raises `MakeAdaptersError` when `kg_answer` would have no
        training record and `--without-kg-answer` is not given."""
        from models.kg.client import KGClientError

        label_kg = not self.settings.without_kg_answer and not self._done(
            "labels_kg_answer", self._labels_inputs("kg_answer"))
        if not label_kg and self._done("api_bootstrap", self._question_inputs()):
            return None
        try:
            probe = self.probe()
        except KGClientError as error:
            raise MakeAdaptersError(f"the mock API does not answer ({error}): start it, or unset ${MOCK_API_ENV} "
                                    "to label on the bundled fixture KG") from error
        self.say(f"KG check: {probe.text()}")
        if probe.ok:
            return probe
        if label_kg:
            raise MakeAdaptersError(
                f"{probe.text()}. kg_answer is labelled on the contexts that KG gives the data's questions: they would "
                "be empty, and kg_answer would have no training record after hours of labelling. Fix: serve CRAG's KG "
                "(python scripts/serve_mock_api.py --kg-dir /path/to/cragkg --port 8000, or the official mock API) "
                f"and set {MOCK_API_ENV}=http://localhost:8000; or pass --without-kg-answer to train web_answer and "
                "api_generation only. Nothing was labelled.")
        self.say("few of the CRAG programs api_bootstrap writes will find facts on this KG; api_generation still "
                 "learns from the bundled KG's templates and the seed")
        return probe

    def step(self, name: str, inputs: Mapping, outputs: Sequence[Path], action: Callable[[], dict],
             resume_ignores: Sequence[str] = ()) -> dict:
        """Runs `action` unless the step is done for `inputs`; prints one status line either way."""
        state = StepState(self.work / name, inputs, resume_ignores)
        marker = state.finished()
        if marker is not None:
            self.say(f"[{name}] skipped, already done: {counts_text(marker['counts'])}")
            return marker["counts"]
        aside = state.begin(outputs)
        started = time.monotonic()
        counts = action()
        state.finish(counts)
        fresh = f" (started afresh: the earlier outputs, made from other inputs, are in {aside})" if aside else ""
        self.say(f"[{name}] done{fresh}: {counts_text(counts)} ({time.monotonic() - started:.1f} s)")
        return counts

    # ------------------------------------------------------------------ the data steps
    def _question_inputs(self) -> dict:
        return {"data": self.data_fingerprint, "base": self.base_fingerprint, "split": self.settings.split,
                "limit": self.settings.limit, "profile": self.described, "mock": self.mock}

    def _questions(self):
        from evaluation.data import load_examples
        from training.build_sft_data import select_split

        return islice(select_split(load_examples(self.settings.data), self.settings.split), self.settings.limit)

    def _labels_inputs(self, adapter: str) -> dict:
        return self._question_inputs() | {"adapter": adapter, "judge": self.settings.judge}

    def labels(self, adapter: str) -> dict:
        folder = self.work / f"labels_{adapter}"
        out = folder / f"{adapter}.jsonl"
        inputs = self._labels_inputs(adapter)

        def action() -> dict:
            from training import build_sft_data
            from training.labels import RETRYABLE
            from training.sft_data import SFTWriter

            args = build_sft_data.LabelSettings(data=self.settings.data, out=str(out), adapter=adapter,
                                                judge=self.settings.judge, batch_size=self.settings.batch_size)
            s = self.session
            builder = build_sft_data.make_builder(args, s.config, generator=s.generator, embedder=s.embedder)
            with SFTWriter(out, retry_reasons=RETRYABLE) as writer:
                this_run = build_sft_data.build(self._questions(), builder, writer, self.settings.batch_size)
            summary = build_sft_data.summarize(out) | {"this_run": dict(this_run), "judge": self.settings.judge,
                                                       "adapter": adapter}
            out.with_name(f"{adapter}.summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
            counts = {"records": summary["records"], "skipped": summary["skipped"]}
            if summary["retryable_skips"]:
                counts["unjudged (delete done.json to ask again)"] = summary["retryable_skips"]
            return counts

        return self.step(f"labels_{adapter}", inputs, [folder / p for p in
                                                       (out.name, f"{adapter}.skipped.jsonl",
                                                        f"{adapter}.summary.json")],
                         action, resume_ignores=("limit",))

    def _kg_inputs(self) -> dict:
        return {"kg": self.described["kg"], "embedder": self.described["embedder"], "mock": self.mock}

    @property
    def templates_path(self) -> Path:
        return self.work / "api_templates" / "templates.jsonl"

    @property
    def bootstrap_path(self) -> Path:
        return self.work / "api_bootstrap" / "bootstrap.jsonl"

    @property
    def api_sft_path(self) -> Path:
        return self.work / "api_sft" / "api_generation.jsonl"

    def api_templates(self) -> dict:
        inputs = self._kg_inputs() | {"seed": self.settings.seed, "max_per_template": self.settings.max_per_template,
                                      "max_templates": self.settings.max_templates}

        def action() -> dict:
            from training.api_templates import write_examples
            from training.template_data import train_examples

            kept, failures = train_examples(self.session.kg, self.settings.max_per_template, self.settings.seed,
                                            self.settings.max_templates)
            for example, score in failures[:20]:
                self.say(f"  template target failed: {example.id}: {example.program!r} -> {list(score.answer)} "
                         f"{score.error} (expected {list(example.expected)})")
            write_examples(kept, self.templates_path)
            return {"kept": len(kept), "failed": len(failures), "templates": len({e.template for e in kept})}

        return self.step("api_templates", inputs, [self.templates_path], action)

    def api_bootstrap(self) -> dict:
        from training.bootstrap_api import rejected_path

        path = self.bootstrap_path

        def action() -> dict:
            from training.bootstrap_api import bootstrap
            from training.sft_data import read_jsonl

            s = self.session
            model_name = self.settings.server_model or Path(self.settings.base).name or self.settings.base
            bootstrap(self._questions(), s.kg, s.generator, model_name, path, batch_size=self.settings.batch_size,
                      execute=True)
            kept = list(read_jsonl(path))
            return {"compiled": len(kept), "found facts": sum(_found_facts(r) for r in kept),
                    "rejected": sum(1 for _ in read_jsonl(rejected_path(path)))}

        return self.step("api_bootstrap", self._question_inputs(), [path, rejected_path(path)], action,
                         resume_ignores=("limit",))

    def api_sft(self) -> dict:
        from models.paths import resolve_repo_path

        extra = [resolve_repo_path(p) for p in self.settings.extra]
        inputs = self._kg_inputs() | {"templates": file_fingerprint(self.templates_path),
                                      "bootstrap": file_fingerprint(self.bootstrap_path),
                                      "extra": [file_fingerprint(p) for p in extra]}

        def action() -> dict:
            from training.api_data import load_api_examples, to_sft_records
            from training.api_templates import read_examples
            from training.template_data import pool_queries, read_extra, sft_records

            kg = self.session.kg
            templates = read_examples(self.templates_path)
            found = [e for e in load_api_examples(self.bootstrap_path, strict=False) if e.result]
            records = sft_records(templates, kg, extra=read_extra(extra))
            bootstrapped = list(to_sft_records(found, kg, pool_queries(kg)))
            records += bootstrapped
            self.api_sft_path.parent.mkdir(parents=True, exist_ok=True)
            self.api_sft_path.write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
            return {"records": len(records), "from templates and seed": len(records) - len(bootstrapped),
                    "bootstrapped": len(bootstrapped)}

        return self.step("api_sft", inputs, [self.api_sft_path], action)

    # ------------------------------------------------------------------ training
    def sft_path(self, adapter: str) -> Path:
        if adapter == "api_generation":
            return self.api_sft_path
        return self.work / f"labels_{adapter}" / f"{adapter}.jsonl"

    @cached_property
    def train_config(self):
        from training.train_lora import TrainConfig

        return TrainConfig(max_steps=self.settings.max_steps, max_length=self.settings.max_length,
                           qlora=self.settings.qlora, seed=self.settings.seed)

    @cached_property
    def base_folder(self) -> Path:
        from models.llm.checkpoint import resolve_checkpoint

        return resolve_checkpoint(self.settings.base, self.target.models_dir, self.target.llm.cache_dir)

    def train(self, adapter: str) -> dict:
        name, out, data = f"train_{adapter}", self.adapter_dirs[adapter], self.sft_path(adapter)
        inputs = {"adapter": adapter, "data": file_fingerprint(data), "base": self.base_fingerprint,
                  "train": dataclasses.asdict(self.train_config)}
        marker = read_json(out / MARKER) or {}
        trained = all((out / f).is_file() for f in ("adapter_config.json", "training_log.json"))
        if trained and marker.get("fingerprint") == fingerprint(inputs):
            self.say(f"[{name}] skipped, already trained for these inputs: {out}")
            self.outcomes[adapter] = ("kept", counts_text(marker.get("counts", {})))
            return marker.get("counts", {})
        from training.sft_data import read_records
        from training.train_lora import train

        chats = [record.messages for record in read_records(data)]
        if not chats:
            raise MakeAdaptersError(f"{adapter}: no training record in {data}; see the step's summary and "
                                    "skipped files in that folder (more questions: a larger --limit)")
        started = time.monotonic()
        result = train(chats, self.base_folder, out, self.train_config, base_name=self.settings.base)
        counts = {"steps": result.steps, "examples": result.n_examples, "dropped": result.n_dropped,
                  "eval loss before": _round(result.eval_loss_before), "after": _round(result.eval_loss_after)}
        write_json(out / MARKER, {"fingerprint": fingerprint(inputs), "inputs": inputs, "counts": counts})
        self.say(f"[{name}] done: {counts_text(counts)} -> {out} ({time.monotonic() - started:.1f} s)")
        return counts


def make_adapters(settings: Settings, say: Callable[[str], None] = print) -> dict:
    """The whole command (module docstring); returns each step's counts and the LFS lines."""
    return AdapterMaker(settings, say).run()


def _found_facts(row: dict) -> bool:
    return bool(row.get("result"))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _cuda_devices() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0
