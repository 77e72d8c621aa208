"""The data steps of `make adapters` (training/make_adapters.py, steps 1 and 2): the labels of the two answer
adapters, and the API adapter's template examples, bootstrapped programs and SFT records. Each is a resumable step
of the run's `AdapterWork`."""
from __future__ import annotations

import json
from pathlib import Path

from training.adapter_work import AdapterWork
from training.resumable import file_fingerprint


class DataSteps:
    """The steps that write the training data, each into its own folder of the work folder."""

    def __init__(self, work: AdapterWork):
        self.work = work
        self.settings = work.settings

    def labels(self, adapter: str) -> dict:
        folder = self.work.folder / f"labels_{adapter}"
        out = folder / f"{adapter}.jsonl"
        inputs = self.work.labels_inputs(adapter)

        def action() -> dict:
            from training import build_sft_data
            from training.labels import RETRYABLE
            from training.sft_data import SFTWriter

            args = build_sft_data.LabelSettings(data=self.settings.data, out=str(out), adapter=adapter,
                                                judge=self.settings.judge, batch_size=self.settings.batch_size)
            s = self.work.session
            builder = build_sft_data.make_builder(args, s.config, generator=s.generator, embedder=s.embedder)
            with SFTWriter(out, retry_reasons=RETRYABLE) as writer:
                this_run = build_sft_data.build(self.work.questions(), builder, writer, self.settings.batch_size)
            summary = build_sft_data.summarize(out) | {"this_run": dict(this_run), "judge": self.settings.judge,
                                                       "adapter": adapter}
            out.with_name(f"{adapter}.summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
            counts = {"records": summary["records"], "skipped": summary["skipped"]}
            if summary["retryable_skips"]:
                counts["unjudged (delete done.json to ask again)"] = summary["retryable_skips"]
            return counts

        return self.work.step(f"labels_{adapter}", inputs, [folder / p for p in
                                                       (out.name, f"{adapter}.skipped.jsonl",
                                                        f"{adapter}.summary.json")],
                         action, resume_ignores=("limit",))

    @property
    def templates_path(self) -> Path:
        return self.work.folder / "api_templates" / "templates.jsonl"

    @property
    def bootstrap_path(self) -> Path:
        return self.work.folder / "api_bootstrap" / "bootstrap.jsonl"

    @property
    def api_sft_path(self) -> Path:
        return self.work.folder / "api_sft" / "api_generation.jsonl"

    def api_templates(self) -> dict:
        inputs = self.work.kg_inputs() | {"seed": self.settings.seed, "max_per_template": self.settings.max_per_template,
                                      "max_templates": self.settings.max_templates}

        def action() -> dict:
            from training.api_templates import write_examples
            from training.template_data import train_examples

            kept, failures = train_examples(self.work.session.kg, self.settings.max_per_template, self.settings.seed,
                                            self.settings.max_templates)
            for example, score in failures[:20]:
                self.work.say(f"  template target failed: {example.id}: {example.program!r} -> {list(score.answer)} "
                         f"{score.error} (expected {list(example.expected)})")
            write_examples(kept, self.templates_path)
            return {"kept": len(kept), "failed": len(failures), "templates": len({e.template for e in kept})}

        return self.work.step("api_templates", inputs, [self.templates_path], action)

    def api_bootstrap(self) -> dict:
        from training.bootstrap_api import rejected_path

        path = self.bootstrap_path

        def action() -> dict:
            from training.bootstrap_api import bootstrap
            from training.sft_data import read_jsonl

            s = self.work.session
            model_name = self.settings.server_model or Path(self.settings.base).name or self.settings.base
            bootstrap(self.work.questions(), s.kg, s.generator, model_name, path, batch_size=self.settings.batch_size,
                      execute=True)
            kept = list(read_jsonl(path))
            return {"compiled": len(kept), "found facts": sum(_found_facts(r) for r in kept),
                    "rejected": sum(1 for _ in read_jsonl(rejected_path(path)))}

        return self.work.step("api_bootstrap", self.work.question_inputs(), [path, rejected_path(path)], action,
                         resume_ignores=("limit",))

    def api_sft(self) -> dict:
        from models.paths import resolve_repo_path

        extra = [resolve_repo_path(p) for p in self.settings.extra]
        inputs = self.work.kg_inputs() | {"templates": file_fingerprint(self.templates_path),
                                      "bootstrap": file_fingerprint(self.bootstrap_path),
                                      "extra": [file_fingerprint(p) for p in extra]}

        def action() -> dict:
            from training.api_data import load_api_examples, to_sft_records
            from training.api_templates import read_examples
            from training.template_data import pool_queries, read_extra, sft_records

            kg = self.work.session.kg
            templates = read_examples(self.templates_path)
            found = [e for e in load_api_examples(self.bootstrap_path, strict=False) if e.result]
            records = sft_records(templates, kg, extra=read_extra(extra))
            bootstrapped = list(to_sft_records(found, kg, pool_queries(kg)))
            records += bootstrapped
            self.api_sft_path.parent.mkdir(parents=True, exist_ok=True)
            self.api_sft_path.write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
            return {"records": len(records), "from templates and seed": len(records) - len(bootstrapped),
                    "bootstrapped": len(bootstrapped)}

        return self.work.step("api_sft", inputs, [self.api_sft_path], action)


    def sft_path(self, adapter: str) -> Path:
        """The SFT records `adapter` is trained on."""
        if adapter == "api_generation":
            return self.api_sft_path
        return self.work.folder / f"labels_{adapter}" / f"{adapter}.jsonl"


def _found_facts(row: dict) -> bool:
    return bool(row.get("result"))
