"""A run with `env.observation_filter: mean_std` is evaluated on observations filtered as in
training: `rlp eval` and every `checkpoint://` policy read the filter's statistics from the
checkpoint (rl_platform/policies/observation_filter.py), and evaluation during training reads
them from the checkpoint it takes. The reference is RLlib's own `MeanStdFilter` connector,
given the checkpoint's state."""

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.connectors.env_to_module.mean_std_filter import MeanStdFilter
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from safetensors import safe_open

from rl_platform import load_spec, train
from rl_platform.policies import EnvContext, load_policy
from rl_platform.policies.observation_filter import observation_filter_in
from rl_platform.rllib import filter_state
from rl_platform.rllib.algorithm_state import ALGORITHM_PART
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from tests.conftest import EXPERIMENTS
from tests.integration.cli_support import invoke_rlp as rlp
from tests.reliability.support import TINY

FILTERED = [
    *TINY,
    "env.observation_filter=mean_std",
    "stop.iterations=2",
    "evaluation={every_env_steps: 400, episodes: 2, parallel: 2, max_steps: 100}",
]


@pytest.fixture(scope="module")
def filtered_run(ray_local, tmp_path_factory) -> Path:
    """Two tiny filtered PPO iterations on CartPole, evaluated during training at the second."""
    spec = load_spec(EXPERIMENTS / "cartpole_ppo.yaml", profile="smoke", overrides=FILTERED)
    return train(spec, out_dir=tmp_path_factory.mktemp("filtered")).run_dir


def _raw_observations(env: gym.Env, n: int) -> np.ndarray:
    """CartPole observations from random play, and a few far outside the statistics (clip)."""
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    rows = []
    for _ in range(n):
        rows.append(obs)
        obs, _, terminated, truncated, _ = env.step(int(rng.integers(2)))
        if terminated or truncated:
            obs, _ = env.reset()
    rows[:2] = [np.full(4, 50.0, np.float32), np.full(4, -50.0, np.float32)]
    return np.stack(rows).astype(np.float32)


def _rllib_filtered(checkpoint: Path, env: gym.Env, raw: np.ndarray) -> np.ndarray:
    """RLlib's MeanStdFilter connector, frozen, with the checkpoint's state, on each row."""
    state = filter_state.for_rllib(load_checkpoint(checkpoint).parts[ALGORITHM_PART], where="t")
    connector = MeanStdFilter(update_stats=False)
    # As RLlib's pipeline does: spaces after construction (the constructor's own would be
    # read before `clip_by_value` is set).
    connector.input_observation_space = env.observation_space
    connector.input_action_space = env.action_space
    connector.set_state(state["env_runner"]["env_to_module_connector"]["MeanStdFilter"])
    episodes = []
    for row in raw:
        episode = SingleAgentEpisode(
            observation_space=env.observation_space, action_space=env.action_space
        )
        episode.add_env_reset(observation=row)
        episodes.append(episode)
    connector(rl_module=None, batch={}, episodes=episodes)
    return np.stack([episode.get_observations(-1) for episode in episodes])


def test_a_checkpoint_policy_acts_on_observations_filtered_as_rllib_does(filtered_run):
    env = gym.make("CartPole-v1")
    raw = _raw_observations(env, 64)
    latest = CheckpointStore(filtered_run / "checkpoints").latest()
    expected = _rllib_filtered(latest, env, raw)
    context = EnvContext("CartPole-v1", env.observation_space, env.action_space)
    policy = load_policy(f"checkpoint://{filtered_run}", env=context)
    seen: list[dict] = []
    forward = policy.module._forward_inference

    def recording(batch, **kwargs):
        out = forward(batch, **kwargs)
        seen.append({"obs": batch["obs"], "logits": out["action_dist_inputs"]})
        return out

    policy.module._forward_inference = recording
    policy.act(raw, np.random.default_rng(0), keys=list(range(len(raw))))
    (step,) = seen
    np.testing.assert_allclose(step["obs"].numpy(), expected, atol=1e-6, rtol=0)
    assert np.abs(expected).max() == pytest.approx(10.0)  # the far rows were clipped
    with torch.no_grad():
        on_rllibs = forward({"obs": torch.from_numpy(expected)})["action_dist_inputs"]
        on_raw = forward({"obs": torch.from_numpy(raw)})["action_dist_inputs"]
    np.testing.assert_allclose(step["logits"].numpy(), on_rllibs.numpy(), atol=1e-6, rtol=0)
    assert not np.allclose(on_raw.numpy(), on_rllibs.numpy(), atol=1e-3)  # the filter matters


def test_rlp_eval_of_a_filtered_run_plays(filtered_run):
    result = rlp("eval", f"checkpoint://{filtered_run}", "--episodes", "2", "--json")
    assert json.loads(result.stdout)["episodes"] == 2


def test_a_filtered_run_is_evaluated_while_it_trains(filtered_run):
    def rows(name: str) -> list[dict]:
        return [json.loads(line) for line in (filtered_run / name).read_text().splitlines()]

    metrics = rows("metrics.jsonl")
    assert [row["iteration"] for row in metrics if "eval/greedy/return_mean" in row] == [2]
    assert [row["checkpoint"] for row in rows("evaluation.jsonl")] == ["iter_000002"]


def test_rlp_export_of_a_filtered_run_carries_the_filter(filtered_run, tmp_path):
    out = tmp_path / "policy.safetensors"
    result = rlp("export", str(filtered_run), str(out))
    assert "and the observation filter's statistics" in result.stderr
    latest = CheckpointStore(filtered_run / "checkpoints").latest()
    state = load_checkpoint(latest).parts[ALGORITHM_PART]
    expected = observation_filter_in(state, where="t", label="t")
    with safe_open(out, "numpy") as handle:
        assert (
            "(x - mean) / (std + 1e-06), clipped to [-10, 10]"
            in handle.metadata()["observation_filter"]
        )
        np.testing.assert_array_equal(handle.get_tensor("observation_filter.mean"), expected.mean)
        np.testing.assert_array_equal(handle.get_tensor("observation_filter.std"), expected.std)
        names = handle.keys()  # a safetensors handle, not a dict
        assert any(not name.startswith("observation_filter.") for name in names)  # the weights


def test_an_exported_filtered_policy_acts_as_its_checkpoint(filtered_run, tmp_path):
    """`policy://FILE` applies the filter the file carries, as `checkpoint://` does."""
    out = tmp_path / "policy.safetensors"
    rlp("export", str(filtered_run), str(out))
    env = gym.make("CartPole-v1")
    raw = _raw_observations(env, 64)
    context = EnvContext("CartPole-v1", env.observation_space, env.action_space)
    seen = {}
    for uri in (f"checkpoint://{filtered_run}", f"policy://{out}"):
        policy = load_policy(uri, env=context)
        forward = policy.module._forward_inference

        def recording(batch, forward=forward, uri=uri, **kwargs):
            out = forward(batch, **kwargs)
            seen[uri] = (batch["obs"].numpy(), out["action_dist_inputs"].numpy())
            return out

        policy.module._forward_inference = recording
        policy.act(raw, np.random.default_rng(0), keys=list(range(len(raw))))
    (checkpoint_obs, checkpoint_logits), (file_obs, file_logits) = seen.values()
    assert not np.allclose(checkpoint_obs, raw)  # the filter was applied
    np.testing.assert_array_equal(file_obs, checkpoint_obs)
    np.testing.assert_array_equal(file_logits, checkpoint_logits)
