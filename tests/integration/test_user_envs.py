"""Envs this project did not write train through the same spec path as ours (issue #18).

Gymnasium ids (Acrobot, MountainCar), a user's env class and factory by entry point, and a
user's two-player `VectorGame` with a scripted bot by entry point, played in a league on
both runners: the array runner (the game is its own fast core) and RLlib's stock runner
(through the one-game `VectorGameEnv` adapter).
"""

import json
from pathlib import Path

import pytest

from rl_platform import load_spec, train
from rl_platform.spec import validate_spec_data
from tests.conftest import EXPERIMENTS
from tests.integration.cli_support import invoke_rlp

QUIET = ["logging.wandb=off", "logging.tensorboard=false"]
TAKE_AWAY = "tests.fixtures.take_away:TakeAwayGame"
OPTIMAL = "tests.fixtures.take_away:act_optimal"


@pytest.mark.parametrize(
    "env_id",
    [
        "Acrobot-v1",
        "MountainCar-v0",
        "tests.fixtures.corridor_env:CorridorEnv",
        "tests.fixtures.corridor_env:make_corridor",
        "tests.fixtures.corridor_env:Corridor-v0",
    ],
)
def test_single_agent_envs_train_the_smoke_profile(ray_local, tmp_path, env_id) -> None:
    small = ["training.train_batch_size=400", "training.minibatch_size=100", "stop.iterations=1"]
    overrides = [*QUIET, *small, f"env.id={env_id}", "env.envs_per_runner=2"]
    spec = load_spec(EXPERIMENTS / "cartpole_ppo.yaml", profile="smoke", overrides=overrides)
    result = train(spec, out_dir=tmp_path)
    assert result.iterations == 1 and result.env_steps >= 400
    assert result.last_checkpoint is not None


def _take_away_spec(runner: str) -> dict:
    return {
        "name": f"take_away_{runner}",
        "algo": "PPO",
        "seed": 0,
        "env": {"id": TAKE_AWAY, "kwargs": {"stones": 9}, "envs_per_runner": 16, "runner": runner},
        "training": {"train_batch_size": 512, "minibatch_size": 128, "num_epochs": 2},
        "model": {"type": "mlp", "hidden": [32]},
        "league": {
            "opponent_mix": {"self_play": 0.5, "optimal": 0.5},
            "scripted": {"optimal": OPTIMAL},
            "slots": 1,
            "snapshot_every": 1,
        },
        "evaluation": {"every_env_steps": 1000, "episodes": 20, "opponents": ["optimal"]},
        "stop": {"iterations": 3},
        "checkpoint": {"every_iterations": 1},
        "logging": {"wandb": "off", "tensorboard": False},
    }


@pytest.mark.parametrize("runner", ["vector", "rllib"])
def test_a_users_game_and_bot_play_in_a_league(ray_local, tmp_path, runner) -> None:
    spec = validate_spec_data(_take_away_spec(runner))
    result = train(spec, out_dir=tmp_path)
    rows = [
        json.loads(line) for line in (result.run_dir / "metrics.jsonl").read_text().splitlines()
    ]
    games = sum(row.get("league/games/optimal", 0.0) for row in rows)
    assert games > 0, "main never met the user's scripted bot"
    assert any("eval/greedy/win_rate/optimal" in row for row in rows)
    league = json.loads((result.run_dir / "league" / "league.json").read_text())
    members = {m["id"]: m for m in league["members"]}
    assert members["optimal"]["metadata"]["agent"] == OPTIMAL
    _play_the_run_from_the_cli(result.run_dir)


def _play_the_run_from_the_cli(run_dir: Path) -> None:
    """`rlp eval` vs the user's bot by URI, and a league tournament, on the user's game."""
    out = invoke_rlp(
        "eval",
        f"checkpoint://{run_dir}",
        "--opponent",
        f"scripted://{OPTIMAL}",
        "--episodes",
        "10",
        "--json",
    )
    summary = json.loads(out.stdout)
    assert summary["episodes"] == 10
    invoke_rlp("league", "tournament", str(run_dir), "--games", "4")
