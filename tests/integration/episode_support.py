"""Reading sampled episodes from either env runner in tests."""

from typing import Any


def module_episodes(episode: Any) -> list[tuple[str, Any]]:
    """(module id, single-agent episode) pairs of a stock `MultiAgentEpisode`, or the one
    pair of an array-runner episode (a `SingleAgentEpisode` that carries its module id)."""
    if hasattr(episode, "agent_episodes"):
        return [(episode.module_for(a), sa) for a, sa in episode.agent_episodes.items()]
    return [(episode.module_id, episode)]
