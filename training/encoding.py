"""Chat examples -> token ids with the loss on the assistant turn only, and the batch collator.

The prompt is rendered exactly as the inference backends render it (`ChatFormatter.render`: the model's chat
template with the generation prompt, tokenized without extra special tokens), and the label is what the
template appends after that prompt for the assistant turn (`Paris<|im_end|>\n` for SmolLM2,
`Paris<|eot_id|>` for Llama 3). Every token of the prompt gets label -100, so the loss covers the answer
and the end-of-turn token (the model learns to stop), and nothing the model only reads. This is trl's
`DataCollatorForCompletionOnlyLM` without searching for the response template in the token ids, which
fails when the template's tokens merge with their neighbours.

Over-long examples: the label is never cut. The prompt is fitted into `max_length - len(label)` tokens by
`ChatFormatter.fit`, the same code that fits prompts at inference: it cuts the tail of the `<DOC>` context
(the least relevant chunks), or the middle of the longest message when there is no context (an API prompt).
An example whose prompt does not fit even then is dropped, and counted.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import torch

from models.llm.chat import ChatFormatter

log = logging.getLogger(__name__)

IGNORE_INDEX = -100  # positions torch's cross-entropy leaves out of the loss


@dataclass(frozen=True)
class EncodedExample:
    input_ids: tuple[int, ...]
    labels: tuple[int, ...]  # IGNORE_INDEX on the prompt
    truncated: bool = False  # the prompt's context was cut to fit


def split_completion(tokenizer, messages: Sequence[dict]) -> tuple[list[dict], str]:
    """(prompt messages, the text the chat template appends for the final assistant turn)."""
    prompt_messages = [dict(m) for m in messages[:-1]]
    prompt = tokenizer.apply_chat_template(prompt_messages, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template(list(messages), tokenize=False)
    if full.startswith(prompt):
        return prompt_messages, full[len(prompt):]
    # A template that renders history differently from a generation prompt: fall back to label + EOS.
    return prompt_messages, messages[-1]["content"] + (tokenizer.eos_token or "")


def encode_example(tokenizer, messages: Sequence[dict], max_length: int) -> EncodedExample | None:
    """Token ids and labels of one chat whose last message is the assistant label.

    Returns:
        The encoded example, or None when the label leaves no room for the prompt within `max_length`.
    """
    formatter = ChatFormatter(tokenizer, max_length)
    prompt_messages, completion = split_completion(tokenizer, messages)
    completion_ids = formatter.encode(completion)
    untouched = formatter.render(prompt_messages)
    prompt = formatter.fit(prompt_messages, max_new_tokens=len(completion_ids))
    if prompt is None:
        return None
    prompt_ids = formatter.encode(prompt)
    if len(prompt_ids) + len(completion_ids) > max_length:
        return None
    return EncodedExample(tuple(prompt_ids + completion_ids),
                          tuple([IGNORE_INDEX] * len(prompt_ids) + completion_ids), truncated=prompt != untouched)


def encode_all(tokenizer, chats: Sequence[Sequence[dict]], max_length: int) -> tuple[list[EncodedExample], int]:
    """Encodes every chat; returns (examples, number dropped because they could not fit)."""
    encoded, dropped = [], 0
    for i, messages in enumerate(chats):
        example = encode_example(tokenizer, messages, max_length)
        if example is None:
            dropped += 1
            log.warning("example %d dropped: its label and question do not fit max_length=%d", i, max_length)
        else:
            encoded.append(example)
    truncated = sum(e.truncated for e in encoded)
    if truncated:
        log.info("%d of %d examples had their context cut to fit max_length=%d", truncated, len(encoded), max_length)
    return encoded, dropped


def collate(examples: Sequence[EncodedExample], pad_token_id: int) -> dict[str, torch.Tensor]:
    """Right-pads a batch: `input_ids`, `attention_mask`, `labels` (padding ignored by the loss)."""
    width = max(len(e.input_ids) for e in examples)
    input_ids = torch.full((len(examples), width), pad_token_id, dtype=torch.long)
    labels = torch.full((len(examples), width), IGNORE_INDEX, dtype=torch.long)
    attention_mask = torch.zeros((len(examples), width), dtype=torch.long)
    for row, example in enumerate(examples):
        n = len(example.input_ids)
        input_ids[row, :n] = torch.tensor(example.input_ids)
        labels[row, :n] = torch.tensor(example.labels)
        attention_mask[row, :n] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}
