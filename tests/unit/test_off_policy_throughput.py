"""benchmarks/off_policy_throughput.py: its arguments, the settings every arm shares, and the
learning-phase arithmetic (no training, no timing)."""

import json

import pytest

from benchmarks.off_policy_throughput import (
    RECIPES,
    learning_phase,
    parse_args,
    plain_settings,
    spec_overrides,
)
from rl_platform.spec import load_spec


def test_defaults_per_algo_and_limits():
    sac, dqn = parse_args([]), parse_args(["--algo", "dqn", "--rounds", "1"])
    assert (sac.steps, sac.learning_starts, sac.threads) == (20_000, 10_000, 1)
    assert (dqn.steps, dqn.learning_starts, dqn.rounds) == (50_000, 1_000, 1)
    for bad in (["--steps", "100", "--learning-starts", "100"], ["--rounds", "0"]):
        with pytest.raises(SystemExit):
            parse_args(bad)


def test_the_plain_loops_hold_the_shipped_specs_values():
    """A spec edited away from its plain loop is refused, not measured against another recipe."""
    assert plain_settings(load_spec(RECIPES["sac"].spec)) == ["--env", "Hopper-v5"]
    # cartpole_dqn: one update per vector step of 4 envs = 3 per 12-step round of the plain loop
    assert plain_settings(load_spec(RECIPES["dqn"].spec)) == ["--updates", "3"]
    edited = load_spec(RECIPES["dqn"].spec, overrides=["training.lr=1e-3"])
    with pytest.raises(SystemExit, match="lr"):
        plain_settings(edited)


@pytest.mark.parametrize("learner", ["array", "rllib"])
def test_both_rlp_arms_learn_at_the_plain_loops_rate(learner):
    args = parse_args(["--algo", "dqn", "--steps", "3000", "--threads", "2"])
    overrides = [*spec_overrides(args), f"training.learner={learner}"]
    spec = load_spec(RECIPES["dqn"].spec, overrides=overrides)
    assert spec.training.training_intensity == 8.0  # 0.25 updates per env step x batch 32
    assert spec.training.update_rate(spec.env.envs_per_runner) == 0.25
    assert spec.training.replay == "uniform" and spec.resources.torch_threads == 2
    assert spec.stop.return_mean is None and spec.stop.env_steps == 3000


def test_the_learning_phase_is_the_iterations_that_start_after_learning_starts(tmp_path):
    rows = [
        {"env_steps": 1000, "perf/iteration_s": 1.0},
        {"env_steps": 2000, "perf/iteration_s": 5.0},  # starts at 1000: learning
        {"env_steps": 3000, "perf/iteration_s": 6.0, "perf/checkpoint_s": 1.0},
    ]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = learning_phase(tmp_path, learning_starts=1000)
    assert got == {"env_steps": 2000, "seconds": 10.0, "env_steps_per_s": 200.0}
    with pytest.raises(SystemExit):
        learning_phase(tmp_path, learning_starts=2500)  # no whole iteration after it
