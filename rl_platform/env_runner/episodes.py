"""`Trajectory` -> RLlib `SingleAgentEpisode`, built in bulk from arrays (RLlib adapter).

Each episode carries `agent_id`, `module_id` and a `multi_agent_episode_id` that is unique
per chunk, so RLlib's learner connectors key its rows `(chunk id, agent, module)` exactly as
they key the agents of a `MultiAgentEpisode` (ray/rllib/connectors/connector_v2.py,
`add_batch_item`), and GAE, time-dim padding and `AgentToModuleMapping` run unchanged.

Two traps of building episodes from arrays (ray/rllib/env/single_agent_episode.py):
`len_lookback_buffer="auto"` would turn all data into lookback (a length-0 episode), and
`infos=None` takes `len(observations)`, which is the number of keys of a dict observation.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer

from rl_platform.connectors.chunk_states import CHUNK_STATES, STATE_REF
from rl_platform.sampling.rollout import Carry, RolloutArrays, Trajectory, carry_from, cut_seat
from rl_platform.sampling.seat_states import SeatStates, flat_rows

_chunk_ids = itertools.count()


def to_episode(
    trajectory: Trajectory,
    *,
    runner_tag: str,
    agent_ids: Sequence[str],
    module_ids: Sequence[str],
    observation_space: gym.Space,
    action_space: gym.Space,
) -> SingleAgentEpisode:
    """One finalized (numpy) episode chunk for `trajectory`."""
    size = len(trajectory)
    chunk = f"{runner_tag}-{trajectory.episode_uid}-{next(_chunk_ids)}"
    observations = InfiniteLookbackBuffer(data=trajectory.observations, space=observation_space)
    episode = SingleAgentEpisode(
        id_=chunk,
        observations=observations,
        observation_space=observation_space,
        infos=[{} for _ in range(size + 1)],
        actions=InfiniteLookbackBuffer(data=trajectory.actions, space=action_space),
        action_space=action_space,
        rewards=InfiniteLookbackBuffer(data=trajectory.rewards),
        extra_model_outputs=_extra_buffers(trajectory.extras, trajectory.state_refs),
        terminated=trajectory.terminated,
        truncated=trajectory.truncated,
        t_started=trajectory.t_started,
        len_lookback_buffer=0,
        agent_id=agent_ids[trajectory.seat],
        module_id=module_ids[trajectory.module],
        multi_agent_episode_id=chunk,
    )
    if trajectory.state_refs is not None:
        episode.custom_data[CHUNK_STATES] = trajectory.state_table
    return episode


def _extra_buffers(
    extras: dict[str, np.ndarray], state_refs: np.ndarray | None
) -> dict[str, InfiniteLookbackBuffer]:
    """Model outputs per step; recurrent modules' states go by reference: a `STATE_REF`
    column with the chunk's first state as its one-step lookback, and the table in
    `custom_data` (connectors/chunk_states.py reads both)."""
    buffers = {name: InfiniteLookbackBuffer(data=values) for name, values in extras.items()}
    if state_refs is not None:
        buffers[STATE_REF] = InfiniteLookbackBuffer(data=state_refs, lookback=1)
    return buffers


@dataclass
class CutEpisodes:
    episodes: list[SingleAgentEpisode]
    carry: Carry | None
    """Open transitions for the next sample call (turn-based games)."""


def cut_episodes(
    arrays: RolloutArrays,
    *,
    acting: np.ndarray,
    current_obs: Any,
    seat_t: np.ndarray,
    states: SeatStates | None,
    tag: str,
    agent_ids: Sequence[str],
    module_ids: Sequence[str],
    spaces: tuple[gym.Space, gym.Space],
) -> CutEpisodes:
    """A sample call's rows as episode chunks, one per recorded seat and game piece
    (`rollout.cut_seat`); `seat_t` [N, P], each seat's closed transitions in its unfinished
    game, is advanced in place."""
    trajectories, pending = [], []
    for game, seat in zip(*np.nonzero(arrays.decided.any(axis=0)), strict=True):
        cut = cut_seat(
            arrays,
            game=int(game),
            seat=int(seat),
            acting_now=bool(acting[game, seat]),
            current_obs=current_obs,
            t_started=int(seat_t[game, seat]),
        )
        trajectories += cut.trajectories
        seat_t[game, seat] = cut.t_next
        if cut.pending_row is not None:
            pending.append((int(game), int(seat), cut.pending_row, cut.pending_reward))
    episodes = [
        to_episode(
            t,
            runner_tag=tag,
            agent_ids=agent_ids,
            module_ids=module_ids,
            observation_space=spaces[0],
            action_space=spaces[1],
        )
        for t in trajectories
        if len(t)
    ]
    return CutEpisodes(episodes, carry_from(arrays, pending, _pending_states(states, pending)))


def _pending_states(states: SeatStates | None, pending: list[tuple[int, int, int, float]]):
    """The states of each open decision (game, seat, row, reward) for the carry."""
    if states is None or not pending:
        return {}
    games, seats = (np.asarray([p[i] for p in pending]) for i in (0, 1))
    return states.open_decisions(flat_rows(games, seats, num_seats=states.num_seats))
