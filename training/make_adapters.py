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

import logging
import os
import time
from pathlib import Path
from typing import Callable

from training.adapter_data import DataSteps
from training.adapter_folders import lfs_lines
from training.adapter_settings import ADAPTERS, LABELLED, MakeAdaptersError, Settings
from training.adapter_training import MARKER, AdapterTrainer  # noqa: F401  (MARKER: where a trained folder says so)
from training.adapter_work import AdapterWork, counts_text
from training.labelling_session import MOCK_API_ENV

log = logging.getLogger(__name__)


class AdapterMaker:
    """Runs the steps of the module docstring for one `Settings`; `run()` returns each step's counts. Its parts: the
    run's shared state and step runner (`work`: training/adapter_work.py), the KG check (`check_kg`, `probe`), the
    data steps (`data`: training/adapter_data.py), the training step (`trainer`: training/adapter_training.py)."""

    def __init__(self, settings: Settings, say: Callable[[str], None] = print, repo_root: Path | None = None):
        self.work = AdapterWork(settings, say, repo_root)
        self.data = DataSteps(self.work)
        self.trainer = AdapterTrainer(self.work, self.data.sft_path)
        self.outcomes: dict[str, tuple[str, str]] = {}  # adapter -> (trained | kept | skipped, detail)

    @property
    def settings(self) -> Settings:
        return self.work.settings

    @property
    def adapter_dirs(self) -> dict:
        return self.work.adapter_dirs

    def say(self, text: str) -> None:
        self.work.say(text)

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
                results[f"labels_{adapter}"] = self.data.labels(adapter)
            results["api_templates"] = self.data.api_templates()
            results["api_bootstrap"] = self.data.api_bootstrap()
            results["api_sft"] = self.data.api_sft()
        finally:
            self.work.session.close()
        failed = []
        for adapter in ADAPTERS:
            if adapter in skipped:
                continue
            try:
                trained = self.trainer.train(adapter)
            except MakeAdaptersError as error:  # no training record: the other adapters are still trained
                self.say(f"[train_{adapter}] not trained: {error}")
                skipped[adapter], failed = str(error).removeprefix(f"{adapter}: "), failed + [adapter]
                continue
            results[f"train_{adapter}"] = trained.counts
            self.outcomes[adapter] = ("kept" if trained.kept else "trained", counts_text(trained.counts))
        for adapter, why in skipped.items():
            self.outcomes[adapter] = ("skipped", why)
        results["summary"] = {name: {"outcome": outcome, "detail": detail}
                              for name, (outcome, detail) in self.outcomes.items()}
        self.say(self.summary(time.monotonic() - started))
        present = {name: self.adapter_dirs[name] for name in ADAPTERS if self.outcomes[name][0] != "skipped"}
        gitignore = self.work.repo_root / ".gitignore"
        lines = lfs_lines(present, self.work.repo_root, gitignore.read_text() if gitignore.is_file() else "")
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

    def probe(self):
        """The KG probe (training/kg_probe.py) of the questions to label, against the mock API the run uses."""
        from models.kg.client import MockAPIClient
        from training.kg_probe import probe_kg

        kg = f"the KG at ${MOCK_API_ENV}" if os.environ.get(MOCK_API_ENV) else \
            f"the bundled fixture KG (no ${MOCK_API_ENV})"
        with MockAPIClient(self.work.session.mock_url, timeout_s=10.0) as client:
            return probe_kg(self.work.questions(), client, kg)

    def check_kg(self):
        """Before labelling: whether the KG serves the data's entities (module docstring). Returns the probe (None
        when every step that reads the KG is done); raises `MakeAdaptersError` when `kg_answer` would have no
        training record and `--without-kg-answer` is not given."""
        from models.kg.client import KGClientError

        label_kg = not self.settings.without_kg_answer and not self.work.done(
            "labels_kg_answer", self.work.labels_inputs("kg_answer"))
        if not label_kg and self.work.done("api_bootstrap", self.work.question_inputs()):
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



def make_adapters(settings: Settings, say: Callable[[str], None] = print) -> dict:
    """The whole command (module docstring); returns each step's counts and the LFS lines."""
    return AdapterMaker(settings, say).run()
