"""ElectricSheep's static/dynamic policy (Yuan et al. 2024 §4.2), applied beside the verifier.

The attribute predictor labels each question static or dynamic (`predict`, a pipeline stage before the
sources); a dynamic question answered without KG evidence then gets "i don't know" (`dynamic_policy: idk`) or
must also pass the verifier's checks at `dynamic_verify_threshold` (`verify`), decided when the answer is
checked (`apply`) so the trace says why.
"""
from __future__ import annotations

import time
from dataclasses import replace

from models.isolation import per_item
from models.llm.postprocess import is_idk
from models.types import IDK
from models.verify.decision import Decision, Stop
from models.verify.verifier import decide


class AttributePolicy:
    """Args:
        predictor: an `AttributePredictor` (`predict(texts, deadline)`, `action(label, has_kg_evidence)`).
        config: the profile's `attributes` section.
        verifier_config: the profile's `verifier` section (the stricter check is it at a higher similarity).
    """

    def __init__(self, predictor, config, verifier_config):
        self.predictor, self.config = predictor, config
        self.stricter = replace(verifier_config, enabled=True, min_similarity=max(
            verifier_config.min_similarity, config.dynamic_verify_threshold))

    def predict(self, task: int, states, deadline) -> None:
        """Labels every state static or dynamic (a failed prediction is "dynamic", the cautious side)."""
        if task not in self.config.tasks:
            return
        started = time.monotonic()
        labels = per_item(lambda batch: self.predictor.predict([s.query.text for s in batch], deadline), states,
                          lambda _: None, "attribute prediction", deadline=deadline)
        seconds = round(time.monotonic() - started, 3)
        cfg = self.config
        for k, (state, label) in enumerate(zip(states, labels)):
            state.attribute = label if label in ("static", "dynamic") else "dynamic"
            state.trace["attribute"] = {"label": state.attribute, "method": cfg.method, "policy": cfg.dynamic_policy,
                                        "failed": label is None, "seconds": seconds,
                                        **labels.error_of(k)}

    def apply(self, states, decisions: list) -> list:
        """The policy on verified answers, one decision per state: a dynamic question without KG evidence gets
        "i don't know" (idk) or must also pass the stricter check (verify)."""
        out = []
        for state, decision in zip(states, decisions):
            if state.attribute is None or not decision.accepted or is_idk(decision.answer):
                out.append(decision)
                continue
            action = self.predictor.action(state.attribute, has_kg_evidence=bool(state.evidence_of("kg").texts))
            state.trace["attribute"]["action"] = action
            if action == "idk":
                decision = Decision(IDK, False, Stop.DYNAMIC_IDK, decision.scores)
            elif action == "verify":
                stricter = decide(decision.scores, self.stricter)
                if not stricter.accepted:
                    decision = Decision(IDK, False, Stop.DYNAMIC_STRICTER, decision.scores, decision.supporting,
                                        {"stricter": stricter.reason})
            out.append(decision)
        return out
