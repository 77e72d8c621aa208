"""Training data and LoRA training for the adapters (db3 §2.4, §3.2, Appendix B/C). Never imported at inference.
Libraries only: their command lines are the thin files in scripts/ (named in brackets).

    build_sft_data.py  CRAG file -> answer-adapter labels (scripts/build_sft_data.py), using
                       labels.py (the rules), judges.py (p_check_gt / p_context, or rules), contexts.py
                       (web or KG context as the pipeline builds it), sft_data.py (the chat JSONL format)
    api_data.py        API-generation data: format, validation by the KG parser, execution, SFT records
                       (scripts/api_data.py)
    bootstrap_api.py   more API targets from a strong model (endpoint.py: any OpenAI-compatible server;
                       scripts/bootstrap_api.py)
    template_data.py   API-generation data from the bundled KG's templates (scripts/make_api_data.py)
    train_lora.py      chat JSONL -> peft adapter folder (LoRA on CPU, 4-bit QLoRA on CUDA; encoding.py
                       masks the loss to the assistant turn; scripts/train_lora.py)
    make_adapters.py   `make adapters`: all of the above for a GPU profile's three adapters in one resumable
                       command (scripts/make_adapters.py; resumable.py: step fingerprints and done markers)
    smoke.py           the CPU training smoke run: labels, a few LoRA steps, the adapter loaded
                       (scripts/smoke_training.py)
    router.py          the domain router trained and saved (scripts/train_router.py)
    gate/              the answer gate's training side: what it may be fitted on, its fit sets, the fit and the
                       refit (scripts/make_gate_web_questions.py, scripts/fit_gate.py)
"""
from training.api_data import APIExample, load_api_examples, validate
from training.labels import LabelBuilder, LabelDecision, decide_label
from training.sft_data import SFTRecord, SFTWriter, read_records

__all__ = ["APIExample", "LabelBuilder", "LabelDecision", "SFTRecord", "SFTWriter", "decide_label",
           "load_api_examples", "read_records", "validate"]
