"""The tiny random Llama of models/llm/tiny.py: Llama's architecture, a chat template, and the HF backend runs it."""
import json

from models.llm.tiny import LLAMA2_CHAT_TEMPLATE


def test_tiny_llama_is_a_llama_with_a_chat_template(tiny_llama):
    from transformers import AutoTokenizer

    config = json.loads((tiny_llama / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert config["num_key_value_heads"] < config["num_attention_heads"]  # grouped-query attention, as Llama 3
    tokenizer = AutoTokenizer.from_pretrained(tiny_llama)
    assert config["vocab_size"] == len(tokenizer)
    rendered = tokenizer.apply_chat_template([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
                                             tokenize=False, add_generation_prompt=True)
    assert "U" in rendered and "S" in rendered


def test_llama2_template_folds_the_system_turn_into_the_first_user_turn():
    from jinja2 import Template

    text = Template(LLAMA2_CHAT_TEMPLATE).render(
        messages=[{"role": "system", "content": "S"}, {"role": "user", "content": "U1"},
                  {"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2"}],
        bos_token="<s>", eos_token="</s>")
    assert text == "<s>[INST] <<SYS>>\nS\n<</SYS>>\n\nU1 [/INST] A1</s><s>[INST] U2 [/INST]"


def test_hf_backend_generates_from_the_tiny_llama(tiny_llama):
    from models.llm.config import LLMConfig
    from models.llm.generator import GenerationRequest
    from models.llm.hf_backend import HFGenerator

    generator = HFGenerator(LLMConfig(path=str(tiny_llama)), models_dir="/nonexistent")
    outputs = generator.generate([GenerationRequest(({"role": "user", "content": q},), max_new_tokens=4)
                                  for q in ("one", "two", "three")])
    assert len(outputs) == 3 and all(isinstance(o, str) for o in outputs)
