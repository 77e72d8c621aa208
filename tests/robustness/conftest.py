"""Prints the suite's figures: batches run, and the worst time against its budget."""
from tests.robustness.support import RECORD


def pytest_terminal_summary(terminalreporter):
    if not RECORD:
        return
    case, seconds, budget = max(RECORD, key=lambda r: r[1] / r[2])
    over = sum(1 for _, s, b in RECORD if s > b)
    terminalreporter.write_line(f"robustness: {len(RECORD)} batches, {over} over budget; worst {seconds:.1f} s of "
                                f"{budget:.0f} s ({seconds / budget:.0%}, {case})")
