"""The answer gate's training side (never imported at inference; the gate itself is models/verify/gate.py): what it may
be fitted on (`held_out`: no question shared with a reported set), its generated fit sets (`kg_questions`;
`web_questions` with the pages of `web_pages`), the labelled candidates, fit, cross-validation and reliability
(`fit`), and the refit that collects runs and fits (`refit`; scripts/fit_gate.py, `make gate`)."""
