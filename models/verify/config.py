"""Settings of the answer verifier (one section of a profile: `verifier:`)."""
from __future__ import annotations

from dataclasses import dataclass

from models.pathways import PUBLIC, SQL_DIRECT, WEB


@dataclass(frozen=True)
class VerifierConfig:
    """Which checks run and the thresholds an answer must pass (chosen with scripts/sweep_verifier.py).

    An answer is kept only when every enabled check passes; otherwise it becomes "i don't know" and the
    trace says which check failed and with what score.
    """

    enabled: bool = True  # False: every candidate is accepted (the decision is still traced)
    min_lexical_support: float = 1.0  # share of the answer's numbers/dates/words found in its evidence
    support_scope: str = "evidence"  # where those must be found together: evidence | chunk | sentence
    min_similarity: float = 0.0  # cosine of the best supporting sentence to query + answer (0 = off)
    short_spans: bool = True  # check and return the span the question asks for (verify/span.py), not the sentence
    min_sentence_support: float = 0.0  # chunk share of the model's whole sentence (a span out of context fails)
    min_question_overlap: float = 0.0  # share of the question's words in the chunk that holds the answer
    reject_restatements: bool = True  # an answer made only of the question's words carries no evidence
    accept_choices: bool = False  # "A or B?" answered by a span of the question: kept (True) or refused
    # choice, yes/no and count questions answered from the evidence in code (verify/checkable.py): the options'
    # values compared, the fact stated, the things counted; the model's own answer to them is not trusted
    computed_answers: bool = True
    llm_check: bool = False  # db3's p_check-style yes/no question to the LLM (one batched call)
    llm_check_prompt: str = "check_support"  # prompts/<name>.txt
    kg_direct: bool = True  # a KG program's single value/list/count is the answer, formatted, no LLM
    kg_direct_max_items: int = 10  # longer value lists go to the LLM with the facts instead
    invalid_needs_evidence: bool = True  # "invalid question" only when the evidence contradicts the premise
    # who decides answer or "i don't know" (verify/gate.py): rules (every threshold above must pass) | calibrated
    # (a fitted P(correct) >= 0.5 over the same scores; scripts/fit_gate.py writes the file gate_path names) |
    # reader (the answer reader's P(right) >= 0.5 where it read the candidate; the rules elsewhere)
    gate: str = "rules"
    gate_path: str = ""  # repo-relative or absolute JSON of the fitted gate (verifier.gate: calibrated)
    # The answer reader (verify/reader.py): a cross-encoder trained by `make verifier` whose P(right) goes into
    # each read candidate's scores as `reader` (a feature of the calibrated gate, and the reader gate's input).
    reader: str = ""  # repo-relative or absolute folder of the trained reader ("" = none)
    reader_base: str = ""  # the encoder `make verifier` trains it from (a model spec: pkg:..., or models-dir path)
    reader_pathways: tuple[str, ...] = (WEB.name, PUBLIC.name, SQL_DIRECT.name)  # whose candidates it reads
