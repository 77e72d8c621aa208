"""Answer verification: every answer is checked against the evidence it came from (see verifier.py)."""
from models.verify.config import VerifierConfig
from models.verify.decision import Decision, Stop
from models.verify.verifier import Candidate, SupportVerifier, Verifier, decide

__all__ = ["Candidate", "Decision", "Stop", "SupportVerifier", "Verifier", "VerifierConfig", "decide"]
