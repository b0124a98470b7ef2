"""Same seed, same run (issue #22, item 1): two runs of a spec with the same seed on the same
machine log identical metrics rows, apart from timings (`perf/...`)."""

import json

import pytest

from rl_platform import load_spec, train
from tests.conftest import EXPERIMENTS


def _rows(run_dir) -> list[dict[str, float]]:
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in row.items() if not k.startswith("perf/")} for row in rows]


@pytest.mark.parametrize("spec_file", ["cartpole_ppo.yaml", "duel_selfplay.yaml"])
def test_two_runs_with_the_same_seed_log_the_same_metrics(spec_file, ray_local, tmp_path):
    overrides = ["stop.iterations=3", "logging.wandb=off", "logging.tensorboard=false"]
    spec = load_spec(EXPERIMENTS / spec_file, profile="smoke", overrides=overrides)
    first = _rows(train(spec, out_dir=tmp_path / "a").run_dir)
    second = _rows(train(spec, out_dir=tmp_path / "b").run_dir)
    assert len(first) == 3
    assert first == second
    other = load_spec(EXPERIMENTS / spec_file, profile="smoke", overrides=[*overrides, "seed=1"])
    assert _rows(train(other, out_dir=tmp_path / "c").run_dir) != first  # the seed matters
