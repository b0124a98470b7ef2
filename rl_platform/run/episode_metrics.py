"""RLlib callback for the stock env runners: the trained module's own episode metrics.

- `reward/<component>`: sums of `info["reward_components"]` over the trained module's seats
  (every agent in single-agent runs), averaged over the last 100 episodes;
- `LEARNER_RETURN_MEAN` (multi-agent): the trained module's own return, one sample per seat;
- `ACTION_COUNTS`: every discrete action the trained module took in the iteration.

An episode that spans several `sample()` calls arrives in chunks: `on_episode_end` gets the
earlier ones as `prev_episode_chunks` (ray/rllib/env/multi_agent_env_runner.py), so returns and
components cover the whole episode. The array env runner logs the same keys itself
(rl_platform/sampling/game_stats.py).
"""

from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.utils.annotations import override

from rl_platform.base.metric_keys import ACTION_COUNTS, LEARNER_RETURN_MEAN
from rl_platform.base.module_ids import MAIN_MODULE_ID

WINDOW = 100


def _learner_episodes(episode: Any) -> list[Any]:
    """The single-agent episodes of the trained module: all of a single-agent episode, main's
    seats of a multi-agent one."""
    if isinstance(episode, MultiAgentEpisode):
        return [e for e in episode.agent_episodes.values() if e.module_id == MAIN_MODULE_ID]
    return [episode]


def step_components(infos: list[Any]) -> dict[str, float]:
    """Sum each reward component over one agent's step infos."""
    totals: dict[str, float] = {}
    for info in infos:
        components = info.get("reward_components") if isinstance(info, dict) else None
        for name, value in (components or {}).items():
            totals[name] = totals.get(name, 0.0) + float(value)
    return totals


def _seat_totals(chunks: Iterable[Any]) -> dict[Any, tuple[float, dict[str, float]]]:
    """Per seat of the trained module: (return, components) summed over the episode's chunks.
    Each chunk's first info is its reset info or repeats the last info of the chunk before."""
    totals: dict[Any, tuple[float, dict[str, float]]] = {}
    for chunk in chunks:
        for agent_episode in _learner_episodes(chunk):
            seat = getattr(agent_episode, "agent_id", None)
            ret, components = totals.get(seat, (0.0, {}))
            ret += float(agent_episode.get_return())
            for name, value in step_components(agent_episode.get_infos()[1:]).items():
                components[name] = components.get(name, 0.0) + value
            totals[seat] = (ret, components)
    return totals


def action_counts(actions: Any) -> Counter:
    array = np.asarray(actions)
    if array.size == 0 or not np.issubdtype(array.dtype, np.integer) or array.ndim != 1:
        return Counter()
    return Counter(array.tolist())


class EpisodeMetricsCallback(RLlibCallback):
    """Logs the trained module's returns, reward components and action counts."""

    @override(RLlibCallback)
    def on_episode_end(
        self,
        *,
        episode: Any,
        prev_episode_chunks: list[Any] | None = None,
        metrics_logger: Any = None,
        **kwargs: Any,
    ) -> None:
        if metrics_logger is None:
            return
        multi_agent = isinstance(episode, MultiAgentEpisode)
        for ret, components in _seat_totals([*(prev_episode_chunks or []), episode]).values():
            if multi_agent:
                metrics_logger.log_value(LEARNER_RETURN_MEAN, ret, window=WINDOW)
            for name, total in components.items():
                metrics_logger.log_value(f"reward/{name}", total, window=WINDOW)

    @override(RLlibCallback)
    def on_sample_end(self, *, samples: list[Any], metrics_logger: Any = None, **kwargs) -> None:
        if metrics_logger is None:
            return
        counts: Counter = Counter()
        for chunk in samples:
            for agent_episode in _learner_episodes(chunk):
                counts.update(action_counts(agent_episode.get_actions()))
        for action, count in counts.items():
            metrics_logger.log_value((ACTION_COUNTS, str(action)), count, reduce="sum")
