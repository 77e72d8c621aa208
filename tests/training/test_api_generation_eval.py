"""training/api_generation_eval.py: the questions evaluated per split are a seeded sample, in id order."""
from types import SimpleNamespace

from training.api_generation_eval import sample


def test_a_split_is_sampled_with_a_seed_and_kept_in_id_order():
    examples = [SimpleNamespace(id=f"{i:02d}") for i in range(10)]
    assert sample(examples, None, 0) == examples and sample(examples, 10, 0) == examples
    picked = sample(examples, 4, 0)
    assert len(picked) == 4 and picked == sorted(picked, key=lambda e: e.id) and picked == sample(examples, 4, 0)
