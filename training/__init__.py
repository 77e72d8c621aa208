"""Training data and LoRA training for the adapters (db3 §2.4, §3.2, Appendix B/C). Never imported at inference.

    build_sft_data.py  CLI: CRAG file -> answer-adapter labels, using
                       labels.py (the rules), judges.py (p_check_gt / p_context, or rules), contexts.py
                       (web or KG context as the pipeline builds it), sft_data.py (the chat JSONL format)
    api_data.py        CLI: API-generation data: format, validation by the KG parser, execution, SFT records
    bootstrap_api.py   CLI: more API targets from a strong model (endpoint.py: any OpenAI-compatible server)
    template_data.py   API-generation data from the bundled KG's templates (scripts/make_api_data.py's library)
    train_lora.py      CLI: chat JSONL -> peft adapter folder (LoRA on CPU, 4-bit QLoRA on CUDA; encoding.py
                       masks the loss to the assistant turn)
    make_adapters.py   `make adapters`: all of the above for a GPU profile's three adapters in one resumable
                       command (scripts/make_adapters.py; resumable.py: step fingerprints and done markers)
"""
from training.api_data import APIExample, load_api_examples, validate
from training.labels import LabelBuilder, LabelDecision, decide_label
from training.sft_data import SFTRecord, SFTWriter, read_records

__all__ = ["APIExample", "LabelBuilder", "LabelDecision", "SFTRecord", "SFTWriter", "decide_label",
           "load_api_examples", "read_records", "validate"]
