"""Answer verification: every answer is checked against the evidence it came from (see verifier.py)."""
from models.verify.config import VerifierConfig
from models.verify.verifier import Candidate, Decision, SupportVerifier, Verifier, decide

__all__ = ["Candidate", "Decision", "SupportVerifier", "Verifier", "VerifierConfig", "decide"]
