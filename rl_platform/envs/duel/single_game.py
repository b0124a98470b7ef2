"""One duel game behind per-agent dicts: the shared engine of the PettingZoo and RLlib envs."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.envs.duel.actions import NUM_ACTIONS, Action
from rl_platform.envs.duel.config import REWARD_COMPONENTS
from rl_platform.envs.duel.core import DRAW, DuelCore

AGENT_IDS: tuple[str, str] = ("player_0", "player_1")
_OUTCOMES = {0: ("win", "loss"), 1: ("loss", "win"), DRAW: ("draw", "draw")}


@dataclass
class AgentStep:
    obs: dict[str, np.ndarray]
    rewards: dict[str, float]
    terminated: bool
    truncated: bool
    infos: dict[str, dict[str, Any]]


class SingleGame:
    """Wraps `DuelCore(1)`; missing actions default to IDLE (e.g. for a finished agent)."""

    def __init__(self, **kwargs: Any) -> None:
        self.core = DuelCore(1, **kwargs)
        self._actions = np.zeros((1, 2), np.int64)

    def reset(self, seed: int | None = None) -> dict[str, np.ndarray]:
        obs = self.core.reset(seed=seed)
        return {agent: obs[0, i] for i, agent in enumerate(AGENT_IDS)}

    def step(self, actions: Mapping[str, Any]) -> AgentStep:
        for i, agent in enumerate(AGENT_IDS):
            action = int(actions.get(agent, Action.IDLE))
            if not 0 <= action < NUM_ACTIONS:
                raise ValueError(f"{agent}: action {action} is not in [0, {NUM_ACTIONS - 1}]")
            self._actions[0, i] = action
        result = self.core.step(self._actions)
        winner = int(result.winner[0])
        infos: dict[str, dict[str, Any]] = {}
        for i, agent in enumerate(AGENT_IDS):
            info: dict[str, Any] = {
                "reward_components": {
                    name: float(result.components[name][0, i]) for name in REWARD_COMPONENTS
                }
            }
            if winner in _OUTCOMES:
                info["outcome"] = _OUTCOMES[winner][i]
                info["ended_by"] = "time" if result.timed_out[0] else "knockout"
            infos[agent] = info
        return AgentStep(
            obs={agent: result.obs[0, i] for i, agent in enumerate(AGENT_IDS)},
            rewards={agent: float(result.rewards[0, i]) for i, agent in enumerate(AGENT_IDS)},
            terminated=bool(result.terminated[0]),
            truncated=bool(result.truncated[0]),
            infos=infos,
        )
