"""Play episodes with several policies seated on an env's agents, batching across env copies.

Up to `parallel` env copies ("slots") run side by side; each step, the rows of every policy
(all slots, all agents it controls) go through that policy in one batch. Episode `i` is reset
with seed `SeedTree(seed).episode(i)` (`seed + i`), so results do not depend on how many slots
run at once (except for the shared action-sampling RNG).
"""

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rl_platform.base.seed_tree import SeedTree
from rl_platform.evaluation.envs import AgentEnv
from rl_platform.policies.base import Policy, stack_rows

SeatPlan = Callable[[int], Mapping[str, str]]
"""Episode index -> {agent_id: policy key}."""


@dataclass
class EpisodeRecord:
    index: int
    seats: dict[str, str]
    returns: dict[str, float]
    length: int = 0
    outcomes: dict[str, str | None] = field(default_factory=dict)
    components: dict[str, dict[str, float]] = field(default_factory=dict)
    truncated_by_limit: bool = False
    ended_by: str | None = None
    """How the game ended where the env says (the duel's `info["ended_by"]`: time, knockout)."""


@dataclass
class _Slot:
    env: AgentEnv
    number: int
    record: EpisodeRecord | None = None
    obs: dict[str, Any] = field(default_factory=dict)
    last_infos: dict[str, Any] = field(default_factory=dict)


@dataclass
class RolloutHooks:
    on_episode: Callable[[EpisodeRecord], None] | None = None
    on_frame: Callable[[AgentEnv, EpisodeRecord], None] | None = None
    """Called after every reset and step of slot 0 (rendering uses `parallel=1`)."""


def outcomes_of(
    returns: Mapping[str, float], infos: Mapping[str, Any], *, cut: bool = False
) -> dict[str, str | None]:
    """`info["outcome"]` where the env reports it, else by comparing returns (2+ agents).

    A game `cut` short by `max_steps` has no result unless the env reported one.
    """
    result: dict[str, str | None] = {}
    for agent, own in returns.items():
        info = infos.get(agent)
        reported = info.get("outcome") if isinstance(info, Mapping) else None
        if reported in ("win", "draw", "loss"):
            result[agent] = reported
            continue
        others = [r for a, r in returns.items() if a != agent]
        if not others or cut:
            result[agent] = None
        else:
            best = max(others)
            result[agent] = "win" if own > best else "loss" if own < best else "draw"
    return result


class Rollout:
    """See the module docstring."""

    def __init__(
        self,
        *,
        make_env: Callable[[], AgentEnv],
        policies: Mapping[str, Policy],
        seats: SeatPlan,
        seed: int,
        parallel: int = 8,
        max_steps: int | None = None,
        hooks: RolloutHooks | None = None,
    ) -> None:
        self.make_env, self.policies, self.seats = make_env, policies, seats
        self.seed, self.parallel, self.max_steps = seed, parallel, max_steps
        self.hooks = hooks or RolloutHooks()
        self.rng = np.random.default_rng(seed)
        self._next_episode = 0
        self._episodes = 0
        self.stop_requested = False

    def run(self, episodes: int) -> list[EpisodeRecord]:
        """Every record of `episodes` episodes, by episode index."""
        return sorted(self.play(episodes), key=lambda r: r.index)

    def play(self, episodes: int) -> Iterator[EpisodeRecord]:
        """Each episode's record as it finishes; nothing is kept here, so a caller that folds
        them into a summary plays any number of episodes in bounded memory."""
        import torch

        torch.manual_seed(self.seed)  # sampled actions of learned policies
        self._episodes, self._next_episode = episodes, 0
        slots = [_Slot(env=self.make_env(), number=i) for i in range(min(self.parallel, episodes))]
        try:
            active = [slot for slot in slots if self._start(slot)]
            while active:
                self._step_all(active)
                still = []
                for slot in active:
                    finished = self._maybe_finish(slot)
                    if finished is not None:
                        yield finished
                        if not self._start(slot):
                            continue
                    still.append(slot)
                active = still
        finally:
            for slot in slots:
                slot.env.close()

    def _start(self, slot: _Slot) -> bool:
        if self._next_episode >= self._episodes or self.stop_requested:
            return False
        index, self._next_episode = self._next_episode, self._next_episode + 1
        seats = dict(self.seats(index))
        slot.obs, slot.last_infos = slot.env.reset(seed=SeedTree(self.seed).episode(index))
        slot.record = EpisodeRecord(
            index=index, seats=seats, returns=dict.fromkeys(slot.env.agent_ids, 0.0)
        )
        self._frame(slot)
        return True

    def _step_all(self, active: list[_Slot]) -> None:
        rows: dict[str, list[tuple[_Slot, str]]] = {}
        for slot in active:
            for agent in slot.obs:
                rows.setdefault(slot.record.seats[agent], []).append((slot, agent))
        actions: dict[int, dict[str, Any]] = {slot.number: {} for slot in active}
        for key, owners in rows.items():
            batch = stack_rows([slot.obs[agent] for slot, agent in owners])
            keys = [(slot.number, agent) for slot, agent in owners]
            chosen = self.policies[key].act(batch, self.rng, keys=keys)
            for (slot, agent), action in zip(owners, chosen, strict=True):
                actions[slot.number][agent] = action
        for slot in active:
            obs, rewards, over, infos = slot.env.step(actions[slot.number])
            record = slot.record
            record.length += 1
            for agent, reward in rewards.items():
                record.returns[agent] = record.returns.get(agent, 0.0) + float(reward)
            for agent, info in infos.items():
                _add_components(record, agent, info)
            slot.last_infos.update(infos)
            slot.obs = {} if over else obs
            at_limit = self.max_steps is not None and record.length >= self.max_steps
            if not over and (at_limit or self.stop_requested):
                record.truncated_by_limit = True
                slot.obs = {}
            self._frame(slot)

    def _maybe_finish(self, slot: _Slot) -> EpisodeRecord | None:
        if slot.obs:
            return None
        record = slot.record
        record.outcomes = outcomes_of(
            record.returns, slot.last_infos, cut=record.truncated_by_limit
        )
        record.ended_by = _ended_by(slot.last_infos)
        for policy in self.policies.values():
            policy.forget([(slot.number, agent) for agent in slot.env.agent_ids])
        if self.hooks.on_episode is not None:
            self.hooks.on_episode(record)
        return record

    def _frame(self, slot: _Slot) -> None:
        if self.hooks.on_frame is not None and slot.number == 0:
            self.hooks.on_frame(slot.env, slot.record)


def _ended_by(infos: Mapping[str, Any]) -> str | None:
    for info in infos.values():
        if isinstance(info, Mapping) and isinstance(info.get("ended_by"), str):
            return info["ended_by"]
    return None


def _add_components(record: EpisodeRecord, agent: str, info: Any) -> None:
    components = info.get("reward_components") if isinstance(info, Mapping) else None
    if not isinstance(components, Mapping):
        return
    totals = record.components.setdefault(agent, {})
    for name, value in components.items():
        totals[name] = totals.get(name, 0.0) + float(value)
