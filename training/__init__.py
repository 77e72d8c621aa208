"""Training data and LoRA training for the adapters (db3 §2.4, §3.2, Appendix B/C). Never imported at inference.

    build_sft_data.py  CLI: CRAG file -> answer-adapter labels (labels.py rules, judges.py checks, contexts.py)
    api_data.py        API-generation data: format, validation against the KG parser, SFT records
    bootstrap_api.py   CLI: more API targets from a strong model behind an OpenAI-compatible endpoint
    train_lora.py      CLI: chat JSONL -> peft adapter folder (LoRA on CPU, 4-bit QLoRA on CUDA)
"""
from training.labels import LabelBuilder, LabelDecision, decide_label
from training.sft_data import SFTRecord, SFTWriter, read_records

__all__ = ["LabelBuilder", "LabelDecision", "SFTRecord", "SFTWriter", "decide_label", "read_records"]
