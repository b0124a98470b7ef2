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

import gymnasium as gym
import numpy as np
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer

from rl_platform.connectors.chunk_states import CHUNK_STATES, STATE_REF
from rl_platform.sampling.rollout import Trajectory

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
