"""Chunk start states read by index (`ChunkStatesToBatch`) equal RLlib's own piece, and the
array runner stores exactly the states that piece reads (no Ray is started)."""

import numpy as np
import pytest
from ray.rllib.connectors.common import AddStatesFromEpisodesToBatch
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer

from rl_platform.connectors.chunk_states import ChunkStatesToBatch, chunk_start_indices
from rl_platform.sampling.rollout import RolloutArrays, cut_seat
from rl_platform.sampling.seat_states import ChunkPositions

MAX_SEQ_LEN = 4


class _Module:
    model_config = {"max_seq_len": MAX_SEQ_LEN}

    def is_stateful(self) -> bool:
        return True

    def get_initial_state(self) -> dict:
        return {"h": np.zeros(3, np.float32)}


def _episode(length: int, *, t_started: int, rng: np.random.Generator) -> SingleAgentEpisode:
    states = {"h": rng.normal(size=(length + 1, 3)).astype(np.float32)}
    return SingleAgentEpisode(
        observations=list(rng.normal(size=(length + 1, 2)).astype(np.float32)),
        actions=list(range(length)),
        rewards=[0.0] * length,
        extra_model_outputs={Columns.STATE_OUT: InfiniteLookbackBuffer(data=states, lookback=1)},
        len_lookback_buffer=0,
        t_started=t_started,
    ).to_numpy()


@pytest.mark.parametrize("length", [1, 3, 4, 5, 8, 9, 13])
@pytest.mark.parametrize("t_started", [0, 7])
def test_chunk_states_equal_rllibs_piece(length, t_started) -> None:
    rng = np.random.default_rng(length)
    episodes = [_episode(length, t_started=t_started, rng=rng)]
    ours = ChunkStatesToBatch()(rl_module=_Module(), batch={}, episodes=episodes)
    rllibs = AddStatesFromEpisodesToBatch(as_learner_connector=True)(
        rl_module=_Module(), batch={}, episodes=episodes
    )
    (key,) = rllibs[Columns.STATE_IN]
    want = np.stack([row["h"] for row in rllibs[Columns.STATE_IN][key]])
    got = np.stack([row["h"] for row in ours[Columns.STATE_IN][key]])
    np.testing.assert_array_equal(got, want)


def test_a_waiting_seat_of_a_turn_based_episode_keeps_its_chunk_states() -> None:
    """Player 1 acted last; player 0's chunks need their STATE_INs as well (the stock runner's
    connect-four episodes, where a default episode iterator skips the seat that waits)."""
    rng = np.random.default_rng(0)
    steps = 9
    observations = [
        {"p0": rng.normal(size=2).astype(np.float32)}
        if t % 2 == 0
        else {"p1": rng.normal(size=2).astype(np.float32)}
        for t in range(steps + 1)
    ]
    actions = [{next(iter(obs)): 0} for obs in observations[:-1]]
    rewards = [{agent: 0.0 for agent in step} for step in actions]
    states = [
        {agent: {"h": rng.normal(size=3).astype(np.float32)} for agent in step} for step in actions
    ]
    episode = MultiAgentEpisode(
        observations=observations,
        actions=actions,
        rewards=rewards,
        infos=[{next(iter(obs)): {}} for obs in observations],
        extra_model_outputs=[{a: {Columns.STATE_OUT: s[a]} for a in s} for s in states],
        len_lookback_buffer=0,
        agent_module_ids={"p0": "main", "p1": "main"},
    )
    episode.to_numpy()
    module = {"main": _Module()}
    wrapper = type(
        "_Multi", (), {"is_stateful": lambda self: True, "__getitem__": lambda self, k: module[k]}
    )()
    ours = ChunkStatesToBatch()(rl_module=wrapper, batch={}, episodes=[episode])
    rllibs = AddStatesFromEpisodesToBatch(as_learner_connector=True)(
        rl_module=wrapper, batch={}, episodes=[episode]
    )
    assert ours[Columns.STATE_IN].keys() == rllibs[Columns.STATE_IN].keys()
    assert len(ours[Columns.STATE_IN]) == 2  # both seats, not only the one that stepped last
    for key, rows in rllibs[Columns.STATE_IN].items():
        want = np.stack([row["h"] for row in rows])
        np.testing.assert_array_equal(
            np.stack([row["h"] for row in ours[Columns.STATE_IN][key]]), want
        )


def test_the_runner_stores_exactly_the_states_the_learner_reads() -> None:
    """One seat deciding every step for 11 steps, a game ending after step 6."""
    steps, positions = 11, ChunkPositions(num_games=1, num_seats=1, max_seq_len=MAX_SEQ_LEN)
    arrays = RolloutArrays.allocate(steps=steps, obs=np.zeros((1, 1, 2), np.float32), num_games=1)
    arrays.state_stride = MAX_SEQ_LEN
    positions.start_call(None)
    one = (np.array([0]), np.array([0]))
    for row in range(1, steps + 1):
        arrays.decided[row, 0, 0] = True
        keep_in, keep_out = positions.take(*one)
        state_in, state_out = np.full((1, 3), row - 0.5), np.full((1, 3), float(row))
        if keep_in.any():
            arrays.record_extra("state_in/h", row, one, state_in)
        if keep_out.any():
            arrays.record_extra("state_out/h", row, one, state_out)
        if row == 6:
            arrays.ended[row, 0] = True
            positions.end_games(np.array([0]))
    cut = cut_seat(
        arrays, game=0, seat=0, acting_now=True, current_obs=np.zeros((1, 1, 2)), t_started=0
    )
    first, second = cut.trajectories
    # Piece 1: decisions at rows 1..6; piece 2: rows 7..11.
    np.testing.assert_array_equal(first.states["h"][0], np.full(3, 0.5))  # before decision 0
    for trajectory, first_row in ((first, 1), (second, 7)):
        data = trajectory.states["h"]
        for index in chunk_start_indices(len(trajectory), MAX_SEQ_LEN):
            np.testing.assert_array_equal(data[index + 1], np.full(3, float(first_row + index)))
    np.testing.assert_array_equal(second.states["h"][0], np.full(3, 6.5))
