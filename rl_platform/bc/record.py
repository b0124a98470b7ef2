"""`rlp record`: roll out a teacher and write its episodes in RLlib's offline format.

The teacher (any policy URI) plays `parallel` copies of a single-agent env. Each finished game
becomes a `SingleAgentEpisode`, flattened to one row per transition exactly like RLlib's
`OfflineSingleAgentEnvRunner` does without `output_write_episodes`
(ray/rllib/offline/offline_env_runner.py, `_map_episodes_to_data`), and written as parquet with
`ray.data` -- the format `BCConfig().offline_data(input_=[DIR])` reads (`algo: BC`).
(RLlib's whole-episode format needs `msgpack_numpy`, which is not a dependency.)

Layout: `OUT/data/*.parquet` and `OUT/record.json` (teacher, env, episodes, steps, returns).
"""

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from loguru import logger

from rl_platform.base.errors import UserError
from rl_platform.base.seed_tree import SeedTree
from rl_platform.envs.env_info import env_facts

DATA_DIR = "data"
META_FILE = "record.json"
ROWS_PER_FILE = 100_000


@dataclass(frozen=True)
class RecordSummary:
    teacher: str
    env_id: str
    episodes: int
    steps: int
    return_mean: float
    return_min: float
    out: str


def episode_rows(episode: Any) -> list[dict[str, Any]]:
    """One dict per transition, the columns of RLlib's offline env runner."""
    from ray.rllib.core.columns import Columns

    n = len(episode)
    return [
        {
            Columns.EPS_ID: episode.id_,
            Columns.OBS: np.asarray(episode.get_observations(i)),
            Columns.ACTIONS: episode.get_actions(i),
            Columns.REWARDS: float(episode.get_rewards(i)),
            Columns.NEXT_OBS: np.asarray(episode.get_observations(i + 1)),
            Columns.TERMINATEDS: bool(episode.is_terminated) if i == n - 1 else False,
            Columns.TRUNCATEDS: bool(episode.is_truncated) if i == n - 1 else False,
        }
        for i in range(n)
    ]


def _new_episode(env: Any, seed: int) -> Any:
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode

    episode = SingleAgentEpisode(
        observation_space=env.observation_space, action_space=env.action_space
    )
    obs, info = env.reset(seed=seed)
    episode.add_env_reset(observation=obs, infos=info)
    return episode


def rollouts(
    teacher: str,
    *,
    env_id: str,
    env_kwargs: dict[str, Any],
    episodes: int,
    seed: int,
    parallel: int,
) -> list[Any]:
    """`episodes` finished games of the teacher, played `parallel` at a time."""
    from rl_platform.env_adapters.registry import make_env
    from rl_platform.policies import EnvContext, load_policy

    envs = [make_env(env_id, [], dict(env_kwargs)) for _ in range(min(parallel, episodes))]
    context = EnvContext(env_id, envs[0].observation_space, envs[0].action_space)
    policy = load_policy(teacher, env=context)
    rng = np.random.default_rng(seed)
    started = len(envs)
    seeds = SeedTree(seed)
    running = {i: _new_episode(env, seeds.episode(i)) for i, env in enumerate(envs)}
    done: list[Any] = []
    while running:
        slots = sorted(running)
        obs = np.stack([np.asarray(running[i].get_observations(-1)) for i in slots])
        actions = policy.act(obs, rng, keys=[running[i].id_ for i in slots])
        for slot, action in zip(slots, np.asarray(actions), strict=True):
            episode = running[slot]
            obs, reward, terminated, truncated, info = envs[slot].step(action)
            episode.add_env_step(
                observation=obs,
                action=action,
                reward=reward,
                infos=info,
                terminated=terminated,
                truncated=truncated,
            )
            if episode.is_done:
                done.append(episode)
                policy.forget([episode.id_])
                del running[slot]
                if started < episodes:
                    running[slot] = _new_episode(envs[slot], seeds.episode(started))
                    started += 1
    return done


def record(
    teacher: str,
    *,
    env_id: str,
    episodes: int,
    out: str | Path,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    parallel: int = 8,
) -> RecordSummary:
    """Roll out `teacher` and write `out/data/*.parquet` + `out/record.json`."""
    import ray

    if env_facts(env_id, env_kwargs).multi_agent:
        raise UserError(f"rlp record: {env_id} is multi-agent; RLlib 2.60 reads single-agent data")
    if episodes < 1:
        raise UserError(f"--episodes must be >= 1, got {episodes}")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} is not empty; pick a new --out folder")
    games = rollouts(
        teacher,
        env_id=env_id,
        env_kwargs=env_kwargs or {},
        episodes=episodes,
        seed=seed,
        parallel=parallel,
    )
    rows = [row for episode in games for row in episode_rows(episode)]
    returns = [float(episode.get_return()) for episode in games]
    blocks = max(1, len(rows) // ROWS_PER_FILE)  # ray.data's default of 200 blocks is slow
    dataset = ray.data.from_items(rows, override_num_blocks=blocks)
    dataset.write_parquet((out / DATA_DIR).as_posix())
    summary = RecordSummary(
        teacher=teacher,
        env_id=env_id,
        episodes=len(games),
        steps=len(rows),
        return_mean=float(np.mean(returns)),
        return_min=float(np.min(returns)),
        out=str(out),
    )
    (out / META_FILE).write_text(json.dumps(asdict(summary), indent=2) + "\n")
    logger.info("recorded {} episodes, {} steps of {} to {}", len(games), len(rows), teacher, out)
    return summary
