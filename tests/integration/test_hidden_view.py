"""`env.hide`: learned modules see the listed features at 0, scripted players the full frame.

On both runners a league game of `main` against `counter` is sampled: main's recorded
observations have HP, shield and stocks at 0 in both halves, while the scripted opponent
acts on frames where they are not (its action is what it chooses on the full frame). An
evaluated policy (`learned_policy`, behind `rlp eval` and the benchmarks) sees the same view.
"""

import functools
from typing import Any

import numpy as np
import pytest

from rl_platform.envs.duel.observation import OBS_SIZE
from rl_platform.envs.duel.pettingzoo_env import action_space, observation_space
from rl_platform.league.slots import SCRIPTED_PREFIX
from rl_platform.policies import EnvContext, learned_policy
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.rllib.league_callback import league_extension
from rl_platform.sampling.rollout_batch import RolloutBatch
from rl_platform.spec import validate_spec_data
from rl_platform.teachers import DUEL_ENV

HIDE = ["hp", "shield", "stocks"]


def _spec(runner: str, *, hide: list[str] = HIDE) -> Any:
    return validate_spec_data(
        {
            "name": "hidden_view",
            "algo": "PPO",
            "seed": 2,
            "env": {
                "id": DUEL_ENV,
                "envs_per_runner": 4,
                "runner": runner,
                "kwargs": {"max_steps": 30},
                "hide": hide,
            },
            "training": {"train_batch_size": 120, "minibatch_size": 60, "num_epochs": 1},
            "model": {"type": "mlp", "hidden": [16]},
            "league": {"opponent_mix": {"counter": 1.0}, "scripted": ["counter"], "slots": 1},
        }
    )


def _columns(spec: Any) -> list[int]:
    columns = list(spec.env.hidden_view().columns)
    assert len(columns) == 6 and max(columns) >= OBS_SIZE // 2  # both halves
    return columns


def _spy(module: Any, seen: list[np.ndarray]) -> None:
    """Record what the scripted module's agent reads, and check its action on it."""
    act = module._act

    def spied(obs: Any, rng: np.random.Generator) -> np.ndarray:
        actions = act(obs, rng)
        seen.append(np.asarray(obs, np.float32).reshape(-1, OBS_SIZE))
        return actions

    module._act = spied


def _per_agent(episodes: list[Any]) -> list[Any]:
    """Single-agent episodes (the array runner's) or each agent's part of multi-agent ones."""
    out = []
    for episode in episodes:
        parts = getattr(episode, "agent_episodes", None)
        out += list(parts.values()) if parts is not None else [episode]
    return out


def _main_observations(samples: list[Any]) -> np.ndarray:
    """What `main` acted on: its episodes' observations, or the valid rows of the array
    learner's rollout batches."""
    batches = [s for s in samples if isinstance(s, RolloutBatch) and s.module_id == "main"]
    if batches:
        return np.concatenate([b.obs[b.valid].numpy() for b in batches])
    mains = [e for e in _per_agent(samples) if e.module_id == "main"]
    assert mains, "main should play the sampled games"
    return np.concatenate([np.asarray(e.get_observations()) for e in mains])


@pytest.mark.parametrize("runner", ["vector", "rllib"])
def test_learned_modules_see_the_hidden_view_and_scripted_ones_the_frame(
    ray_local, tmp_path, runner
) -> None:
    spec = _spec(runner)
    extension = functools.partial(league_extension, run_dir=tmp_path)
    algo = build_algorithm_config(spec, extensions=[extension]).build_algo()
    try:
        env_runner = algo.env_runner
        seen: list[np.ndarray] = []
        _spy(env_runner.module[f"{SCRIPTED_PREFIX}counter"], seen)
        episodes = env_runner.sample(num_timesteps=4 * 20, explore=True)
    finally:
        algo.stop()
    columns = _columns(spec)
    main_obs = _main_observations(episodes)
    assert np.all(main_obs[:, columns] == 0.0)
    assert np.any(main_obs[:, 0:5] != 0.0)  # the rest of the frame is there
    counter_obs = np.concatenate(seen)
    assert np.all(counter_obs[:, columns].max(axis=0) > 0.0)  # every hidden column, unhidden


def test_an_evaluated_policy_sees_what_it_trained_on() -> None:
    spec = _spec("vector")
    context = EnvContext(DUEL_ENV, observation_space(), action_space())
    policy = learned_policy(spec, None, env=context, sample=False, label="hidden")
    read: list[np.ndarray] = []
    forward = policy.module._forward_inference
    policy.module._forward_inference = lambda batch: (
        read.append(batch["obs"].numpy()) or forward(batch)
    )
    obs = np.ones((3, OBS_SIZE), np.float32)
    policy.act(obs, np.random.default_rng(0), keys=range(3))
    columns = _columns(spec)
    assert np.all(read[0][:, columns] == 0.0)
    assert np.all(np.delete(read[0], columns, axis=1) == 1.0)
    assert np.all(obs == 1.0)  # the caller's frame is untouched (scripted players share it)
