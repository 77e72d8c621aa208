"""Everything the reasoning prompt reads about one question, as labelled sections.

Sources stay apart so the prompt can say what each one is worth: web chunks and tables are evidence,
KG and public facts are exact records, calculator lines are computed from the references, and the
knowledge extractor's note is the model's own memory, labelled as possibly wrong (ElectricSheep §4.4:
a reference for the reasoning step, never an answer by itself).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class References:
    web: tuple[str, ...] = ()  # text chunks, most relevant first
    tables: tuple[str, ...] = ()  # Markdown tables
    kg: tuple[str, ...] = ()  # verbalised KG facts
    public: tuple[str, ...] = ()  # public-data facts
    calculations: tuple[str, ...] = ()  # "expression = value (...)" lines from the calculator
    knowledge_note: str = ""  # the knowledge extractor's answer ("" = none)

    def is_empty(self) -> bool:
        return not (self.web or self.tables or self.kg or self.public or self.calculations or self.knowledge_note)


def _numbered(title: str, label: str, items: tuple[str, ...], max_chars: int | None = None) -> str:
    items = tuple(item.strip() for item in items if item and item.strip())
    if not items:
        return ""
    body = "\n".join(f"### {label} {index}:\n{item}" for index, item in enumerate(items, 1))
    if max_chars is not None:
        body = body[:max_chars]
    return f"## {title}\n{body}\n-----\n"


def format_references(references: References, *, max_table_chars: int = 4000, max_kg_chars: int = 1000,
                      generator=None, max_tokens: int | None = None) -> str:
    """The references as prompt text: web chunks, tables, KG facts, public facts, calculations, the other
    agent's answer (ElectricSheep's order). The web section is the one cut to fit `max_tokens`: it is the
    longest and its chunks come most relevant first.

    Args:
        references: one question's references.
        max_table_chars, max_kg_chars: caps of those sections (characters).
        generator: anything with `truncate_tokens` (the LLM backend) to cap the web section so that the
            whole text stays within `max_tokens`; None = no token cap.
    """
    fixed = "".join([
        _numbered("Table references", "Table", references.tables, max_table_chars),
        _numbered("Knowledge graph references", "KG fact", references.kg, max_kg_chars),
        _numbered("Public data references", "Fact", references.public, max_kg_chars),
        _numbered("Possibly useful calculation results (computed exactly from numbers in the references)",
                  "Calculation", references.calculations),
    ])
    note = references.knowledge_note.strip()
    if note:
        fixed += f"## An answer from another agent (from memory, without references; it may be wrong)\n{note}\n-----\n"
    web = "".join(f"- {chunk.strip()}\n" for chunk in references.web if chunk and chunk.strip())
    if web and generator is not None and max_tokens is not None:
        room = max_tokens - generator.count_tokens(fixed)
        web = generator.truncate_tokens(web, room) if room > 0 else ""
    web_section = f"## Web references\n{web.rstrip()}\n-----\n" if web.strip() else ""
    text = web_section + fixed
    return text if text else "## References\nnone\n-----\n"
