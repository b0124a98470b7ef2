"""RLlib callback adding per-episode metrics: `reward/<component>` and `actions/<i>_frac`.

Reward components come from `info["reward_components"]` when an env provides them; action
fractions are logged for discrete actions. Both are averaged over the last 100 episodes.
"""

from collections import Counter
from typing import Any

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.utils.annotations import override

WINDOW = 100


def _agent_episodes(episode: Any) -> list[Any]:
    if isinstance(episode, MultiAgentEpisode):
        return list(episode.agent_episodes.values())
    return [episode]


def summarize_components(infos: list[Any]) -> dict[str, float]:
    """Sum each reward component over one agent's episode."""
    totals: dict[str, float] = {}
    for info in infos:
        components = info.get("reward_components") if isinstance(info, dict) else None
        for name, value in (components or {}).items():
            totals[name] = totals.get(name, 0.0) + float(value)
    return totals


def action_fractions(actions: Any) -> dict[int, float]:
    array = np.asarray(actions)
    if array.size == 0 or not np.issubdtype(array.dtype, np.integer) or array.ndim != 1:
        return {}
    counts = Counter(array.tolist())
    return {int(a): n / array.size for a, n in counts.items()}


class EpisodeMetricsCallback(RLlibCallback):
    """Logs reward components and discrete action fractions at each episode end."""

    @override(RLlibCallback)
    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        for agent_episode in _agent_episodes(episode):
            for name, total in summarize_components(agent_episode.get_infos()).items():
                metrics_logger.log_value(f"reward/{name}", total, reduce="mean", window=WINDOW)
            for action, frac in action_fractions(agent_episode.get_actions()).items():
                metrics_logger.log_value(
                    f"actions/{action}_frac", frac, reduce="mean", window=WINDOW
                )
