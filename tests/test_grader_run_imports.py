"""What a grader run loads: `UserModel()` on the real CPU profile answers a Task-2 batch of one sample
question (the KG pathway on, its mock API unreachable), in a fresh interpreter so no other test's imports
count. The local mock server (`mock_api`, fastapi, uvicorn) and everything above `models/` must not be among
the loaded modules: the grader's image does not need them."""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOT_IN_A_GRADER_RUN = ("fastapi", "uvicorn", "starlette", "mock_api", "evaluation", "scripts", "training",
                       "submission", "local_evaluation")

GRADER = f"""
import json, sys
from models.user_config import UserModel

rows = [json.loads(line) for line in open("data/sample/crag_sample.jsonl", encoding="utf-8")][:1]
model = UserModel()
batch = {{key: [row[key] for row in rows] for key in ("interaction_id", "query", "search_results", "query_time")}}
answers = model.batch_generate_answer(batch)
loaded = sorted(name for name in sys.modules if name.split(".")[0] in {NOT_IN_A_GRADER_RUN!r})
print(json.dumps({{"answers": answers, "kg_built": model.pipeline.kg is not None, "loaded": loaded}}))
"""


def test_a_grader_run_loads_no_mock_server_and_nothing_above_models():
    env = {k: v for k, v in os.environ.items() if k != "CRAG_PROFILE"}
    env.update(CRAG_MOCK_API_URL="http://127.0.0.1:9", OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "2"))
    proc = subprocess.run([sys.executable, "-c", GRADER], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(report["answers"]) == 1 and all(isinstance(a, str) and a for a in report["answers"])
    assert report["kg_built"]  # the KG pathway (HTTP client included) was part of the run
    assert report["loaded"] == []
