"""A PettingZoo game rl_platform did not write, learned in a self-play league (issue #18).

`experiments/tictactoe_selfplay.yaml` as shipped (PettingZoo's AEC tic-tac-toe by module path,
the stock multi-agent runner, `main` vs its snapshots and a random legal mover) must win at
least 90% of 200 greedy games against `random`, seats alternating, within 200k env steps. Its
own evaluation block measures it while training; the run stops at 0.95. About 4 minutes on 2
cores, so it is marked slow (`uv run pytest -m slow`); docs/envs.md records a run.
"""

import json

import pytest

from rl_platform import load_spec, train
from tests.conftest import EXPERIMENTS

BUDGET = 200_000
TARGET = 0.9
METRIC = "eval/greedy/win_rate/random"


@pytest.mark.slow
def test_tictactoe_league_beats_random_within_the_budget(ray_local, tmp_path) -> None:
    spec = load_spec(
        EXPERIMENTS / "tictactoe_selfplay.yaml",
        overrides=["logging.tensorboard=false", f"stop.env_steps={BUDGET}"],
    )
    result = train(spec, out_dir=tmp_path)
    rows = [
        json.loads(line) for line in (result.run_dir / "evaluation.jsonl").read_text().splitlines()
    ]
    reached = [row for row in rows if row[METRIC] >= TARGET]
    history = [(row.get("env_steps"), row[METRIC]) for row in rows]
    assert reached, f"never reached {TARGET} vs random within {BUDGET} env steps: {history}"
