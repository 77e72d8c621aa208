"""A tiny random Llama saved as a model folder: the real architecture and a real tokenizer, no real weights.

Checks that must run where no 8B can be downloaded (a fresh clone's tests, a rented GPU with no hub, the
`make adapters` end-to-end test) need a model whose *code path* is Llama-3-8B's: the same `LlamaForCausalLM`,
the same LoRA target modules (q/k/v/up/down/gate), a tokenizer with a chat template. Its outputs are noise; a
check built on it asserts shapes, order, dtypes and plumbing, never answer quality.

The tokenizer is whichever folder the caller names (the grader's Llama-2 tokenizer in $CRAG_DATA/tokenizer,
or the packaged SmolLM2's). One that ships no chat template gets Llama-2's `[INST]` template, so both backends
can render chat messages.
"""
from __future__ import annotations

from pathlib import Path

from models import crag_data

# Llama-2's chat format (the grader's tokenizer ships without a template): a system turn folded into the first
# user turn, each user turn in [INST] ... [/INST], each assistant turn followed by the end-of-sequence token.
LLAMA2_CHAT_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{% set system = messages[0]['content'] %}"
    "{% set messages = messages[1:] %}{% else %}{% set system = '' %}{% endif %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}"
    "{{ bos_token }}[INST] {% if loop.first and system %}<<SYS>>\n{{ system }}\n<</SYS>>\n\n{% endif %}"
    "{{ message['content'] }} [/INST]"
    "{% elif message['role'] == 'assistant' %} {{ message['content'] }}{{ eos_token }}{% endif %}"
    "{% endfor %}")


def save_tiny_llama(out_dir: str | Path, tokenizer_dir: str | Path, *, hidden_size: int = 128, layers: int = 2,
                    heads: int = 2, kv_heads: int = 1, max_positions: int = 8192, seed: int = 0) -> Path:
    """Writes a randomly initialised `LlamaForCausalLM` with `tokenizer_dir`'s tokenizer into `out_dir`.

    Args:
        out_dir: the model folder to write (created; `config.json`, weights, tokenizer files).
        tokenizer_dir: a Hugging Face tokenizer folder.
        hidden_size, layers, heads, kv_heads: the shape (grouped-query attention as Llama 3: kv_heads < heads). The
            default head size, hidden_size / heads = 64, is one vLLM's attention kernels take: its CPU build refuses
            16 ("Unsupported CPU attention configuration: head_dim=16").
        max_positions: the context length the folder declares (a profile's `llm.max_model_len` must fit it).
        seed: the weights' seed (the same seed and shape give the same folder).

    Returns:
        `out_dir`, as a Path.
    """
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    out = Path(out_dir)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = LLAMA2_CHAT_TEMPLATE
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                         max_position_embeddings=max_positions, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         tie_word_embeddings=False)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None \
        else tokenizer.eos_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out




def default_tokenizer_dir(models_dir: str) -> Path:
    """The tokenizer a tiny model gets when nobody names one: the grader's (`$CRAG_DATA/tokenizer`,
    `models.crag_data`) where it is present, so prompts are cut as the grader's Llama counts them; else the packaged
    SmolLM2's (converted once from its GGUF), so a fresh clone without the CRAG files still builds one."""
    from models.llm.checkpoint import resolve_checkpoint
    from models.llm.config import LLMConfig

    grader = crag_data.crag_path(crag_data.TOKENIZER)
    if (grader / "tokenizer.json").is_file():
        return grader
    return Path(resolve_checkpoint(LLMConfig().path, models_dir, LLMConfig().cache_dir))
