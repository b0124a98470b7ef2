"""`rlp train` end to end on CartPole: run folder, metrics, resume, export, learning."""

import json

import gymnasium as gym
import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from rl_platform import load_spec, train
from rl_platform.policies import EnvContext, load_policy
from rl_platform.rllib.algorithm_state import module_weights
from rl_platform.run.export import export_policy
from rl_platform.run.phase_clock import SPLIT_KEYS
from rl_platform.storage.checkpoints import load_checkpoint
from tests.conftest import EXPERIMENTS
from tests.integration.cli_support import invoke_rlp as rlp

TINY = ["training.train_batch_size=500", "training.minibatch_size=250", "training.num_epochs=2"]


def _spec(*extra: str, profile: str | None = "smoke"):
    overrides = [*TINY, *extra]
    return load_spec(EXPERIMENTS / "cartpole_ppo.yaml", profile=profile, overrides=overrides)


# The learning rate falls with env steps sampled, and a resumed run goes on where it was.
LR_SCHEDULE = "training.lr_schedule=[[0, 1.0e-3], [1000, 1.0e-4]]"


def test_run_folder_metrics_and_resume(ray_local, tmp_path):
    first = train(
        _spec("logging.wandb=offline", "stop.iterations=2", LR_SCHEDULE), out_dir=tmp_path
    )
    run_dir = first.run_dir
    for name in ("spec.yaml", "metrics.jsonl", "trial_metrics.json", "train.log"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "checkpoints" / "latest").read_text().strip() == "iter_000002"
    assert list((run_dir / "tensorboard").glob("events.out.tfevents.*"))
    assert list((run_dir / "wandb").glob("offline-run-*"))

    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in lines] == [1, 2]
    for key in (
        "train/episode_return_mean",
        "train/entropy",
        "train/approx_kl",
        "train/clip_frac",
        "loss/policy",
        "loss/value",
        "train/vf_explained_var",
        "train/lr",
        "perf/env_steps_per_s",
        "perf/iteration_s",
        "actions/0_frac",
    ):
        assert key in lines[-1], key
    for row in lines:  # where each iteration's time went, adding up to the iteration
        split = [row[key] for key in SPLIT_KEYS]
        assert all(value >= 0 for value in split)
        assert sum(split) == pytest.approx(row["perf/iteration_s"], rel=0.05)
        assert row["perf/sample_s"] > 0 and row["perf/learn_s"] > 0
        assert row["perf/checkpoint_s"] > 0  # the smoke profile checkpoints every iteration
    summary = json.loads((run_dir / "trial_metrics.json").read_text())
    assert summary["frame"] == first.env_steps > 0
    assert "trial_metrics: frame:" in (run_dir / "train.log").read_text()

    saved = load_checkpoint(run_dir / "checkpoints" / "iter_000002")
    resumed = train(_spec("logging.wandb=off", "stop.iterations=3", LR_SCHEDULE), resume=run_dir)
    assert resumed.iterations == 3
    assert resumed.env_steps > saved.meta["env_steps"] == first.env_steps
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in lines] == [1, 2, 3]
    # The rate logged after each update is the next update's: ~500 env steps, then >= 1000.
    rates = [m["train/lr"] for m in lines]
    assert 1.0e-4 < rates[0] < 1.0e-3
    assert rates[1] == rates[2] == pytest.approx(1.0e-4)


def test_export_writes_policy_weights_only(ray_local, tmp_path):
    result = train(
        _spec("logging.wandb=off", "logging.tensorboard=false", "stop.iterations=1"),
        out_dir=tmp_path,
    )
    exported = export_policy(result.run_dir, tmp_path / "policy.safetensors")
    tensors = load_file(tmp_path / "policy.safetensors")
    expected = module_weights(load_checkpoint(result.last_checkpoint).parts["algorithm"])[
        "default_policy"
    ]
    assert exported.module_id == "default_policy" and set(tensors) == set(expected)
    for name, array in expected.items():
        np.testing.assert_array_equal(tensors[name], array)
    _exported_file_plays_as_its_checkpoint(result.run_dir, tmp_path)


def _greedy_actions(uri: str, env: gym.Env, obs: np.ndarray) -> np.ndarray:
    context = EnvContext("CartPole-v1", env.observation_space, env.action_space)
    policy = load_policy(uri, env=context)
    return policy.act(obs, np.random.default_rng(0), keys=list(range(len(obs))))


def _exported_file_plays_as_its_checkpoint(run_dir, tmp_path) -> None:
    """`policy://FILE` needs no run folder: the file carries the spec that rebuilds it."""
    env = gym.make("CartPole-v1")
    obs = np.stack([env.observation_space.sample() for _ in range(256)]).astype(np.float32)
    wanted = _greedy_actions(f"checkpoint://{run_dir}", env, obs)
    fp32 = tmp_path / "fp32.safetensors"
    export_policy(run_dir, fp32)
    bf16 = tmp_path / "bf16.safetensors"
    export_policy(run_dir, bf16, dtype="bf16")
    assert bf16.stat().st_size < 0.6 * fp32.stat().st_size
    np.testing.assert_array_equal(_greedy_actions(f"policy://{fp32}", env, obs), wanted)
    # bf16 keeps 8 bits of mantissa: the greedy action may flip where two logits nearly tie.
    agree = _greedy_actions(f"policy://{bf16}", env, obs) == wanted
    assert agree.mean() >= 0.95
    duel = rlp("eval", f"policy://{fp32}", "--env", "duel", "--episodes", "1", code=2)
    assert duel.stderr.strip().splitlines() == [
        f"error: policy://{fp32} was trained on CartPole-v1, not rlp/Duel-v0"
    ]
    plain = tmp_path / "plain.safetensors"
    save_file({"w": np.zeros(3, np.float32)}, plain)
    refused = rlp("eval", f"policy://{plain}", "--env", "CartPole-v1", code=2)
    assert "carries no policy spec" in refused.stderr


def test_an_iteration_hook_sees_every_iteration_and_can_stop_the_run(ray_local, tmp_path):
    seen: list[tuple[int, bool]] = []

    def hook(algo, metrics: dict[str, float]) -> str | None:
        seen.append((int(metrics["iteration"]), algo.get_module() is not None))
        return "enough for the hook" if metrics["iteration"] >= 2 else None

    spec = _spec("logging.wandb=off", "logging.tensorboard=false", "stop.iterations=5")
    result = train(spec, out_dir=tmp_path, on_iteration=hook)
    assert seen == [(1, True), (2, True)]
    assert result.iterations == 2 and result.stop_reason == "enough for the hook"
    assert (result.run_dir / "checkpoints" / "latest").read_text().strip() == "iter_000002"


def test_seeded_cartpole_ppo_learns_within_60k_steps(ray_local, tmp_path):
    spec = load_spec(
        EXPERIMENTS / "cartpole_ppo.yaml",
        overrides=[
            "logging.wandb=off",
            "logging.tensorboard=false",
            "stop.return_mean=150",
            "stop.env_steps=60000",
            "checkpoint.every_iterations=100",
        ],
    )
    result = train(spec, out_dir=tmp_path)
    assert result.trial_metrics["total_reward_ma"] >= 150, result.trial_metrics
    assert result.env_steps <= 62000  # one iteration of slack past the budget check
    assert result.stop_reason.startswith("return_mean")


@pytest.mark.parametrize("algo_file", ["cartpole_dqn.yaml", "pendulum_sac.yaml"])
def test_guarded_learners_of_other_algorithms_report_health(ray_local, tmp_path, algo_file):
    # Start learning early so both smoke iterations include gradient updates.
    overrides = ["logging.wandb=off", "training.num_steps_sampled_before_learning_starts=100"]
    spec = load_spec(EXPERIMENTS / algo_file, profile="smoke", overrides=overrides)
    result = train(spec, out_dir=tmp_path)
    assert result.history[-1].get("health/nonfinite_update") == 0.0
