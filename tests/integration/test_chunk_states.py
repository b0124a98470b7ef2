"""Chunk start states read by index (`ChunkStatesToBatch`) equal RLlib's own piece, and the
array runner stores exactly the states that piece reads (no Ray is started)."""

import gymnasium as gym
import numpy as np
import pytest
from ray.rllib.connectors.common import AddStatesFromEpisodesToBatch
from ray.rllib.connectors.learner import AddOneTsToEpisodesAndTruncate
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer

from rl_platform.connectors.chunk_states import ChunkStatesToBatch, chunk_start_indices
from rl_platform.env_runner.episodes import to_episode
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


def _recorded_arrays(steps: int, ends: tuple[int, ...]) -> RolloutArrays:
    """One seat deciding every step, a game ending after each step of `ends` (terminated,
    then truncated, alternately); the observation of the decision at row r is (r, r), its
    state_in r - 0.5 and its state_out r: the runner keeps only those `ChunkPositions` picks."""
    positions = ChunkPositions(num_games=1, num_seats=1, max_seq_len=MAX_SEQ_LEN)
    arrays = RolloutArrays.allocate(steps=steps, obs=np.zeros((1, 1, 2), np.float32), num_games=1)
    arrays.state_stride = MAX_SEQ_LEN
    positions.start_call(None)
    one = (np.array([0]), np.array([0]))
    for row in range(1, steps + 1):
        arrays.decided[row, 0, 0] = True
        arrays.obs[row, 0, 0] = row
        keep_in, keep_out = positions.take(*one)
        if keep_in.any():
            arrays.states.add("state_in/", row, one, {"h": np.full((1, 3), row - 0.5)})
        if keep_out.any():
            arrays.states.add("state_out/", row, one, {"h": np.full((1, 3), float(row))})
        if row in ends:
            arrays.ended[row, 0] = True
            done = arrays.truncated if ends.index(row) % 2 else arrays.terminated
            done[row, 0] = True
            positions.end_games(np.array([0]))
    return arrays


def test_the_runner_stores_exactly_the_states_the_learner_reads() -> None:
    """11 steps, a game ending after step 8: piece 1 is rows 1..8, piece 2 rows 9..11. The
    learner reads the chunks with RLlib's bootstrap step appended (K + 1 steps), so piece 1's
    last state starts a sequence."""
    arrays = _recorded_arrays(steps=11, ends=(8,))
    cut = cut_seat(
        arrays, game=0, seat=0, acting_now=True, current_obs=np.zeros((1, 1, 2)), t_started=0
    )
    first, second = cut.trajectories
    for trajectory, first_row in ((first, 1), (second, 9)):
        table, refs = trajectory.state_table["h"], trajectory.state_refs
        assert len(refs) == len(trajectory) + 1
        np.testing.assert_array_equal(table[refs[0]], np.full(3, first_row - 0.5))  # lookback
        starts = chunk_start_indices(len(trajectory) + 1, MAX_SEQ_LEN)
        for index in starts:
            np.testing.assert_array_equal(table[refs[index + 1]], np.full(3, first_row + index))
        assert (refs >= 0).sum() == 1 + len(starts)  # nothing else is kept
        assert len(table) == 1 + len(starts)
    assert chunk_start_indices(len(first) + 1, MAX_SEQ_LEN) == [3, 7]
    # Every state copied from the acting device is one the learner reads.
    assert len(arrays.states._where) == len(first.state_table["h"]) + len(second.state_table["h"])


@pytest.mark.parametrize("t_started", [0, 7])
def test_referenced_states_give_what_rllibs_piece_reads_from_state_outs(t_started) -> None:
    """An array-runner chunk (states by reference) against the same chunk with a full
    STATE_OUT column, through RLlib's own piece."""
    arrays = _recorded_arrays(steps=11, ends=())
    (trajectory,) = cut_seat(
        arrays, game=0, seat=0, acting_now=True, current_obs=np.zeros((1, 1, 2)), t_started=0
    ).trajectories
    trajectory.t_started = t_started
    space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    episode = to_episode(
        trajectory,
        runner_tag="t",
        agent_ids=["p0"],
        module_ids=[None],
        observation_space=space,
        action_space=gym.spaces.Discrete(3),
    )
    full = {"h": np.stack([np.full(3, -1.0 if r < 0 else 0.0) for r in trajectory.state_refs])}
    full["h"][trajectory.state_refs >= 0] = trajectory.state_table["h"]
    reference = _episode(len(trajectory), t_started=t_started, rng=np.random.default_rng(0))
    reference.extra_model_outputs[Columns.STATE_OUT] = InfiniteLookbackBuffer(data=full, lookback=1)
    ours = ChunkStatesToBatch()(rl_module=_Module(), batch={}, episodes=[episode])
    rllibs = AddStatesFromEpisodesToBatch(as_learner_connector=True)(
        rl_module=_Module(), batch={}, episodes=[reference]
    )
    (ours_rows,), (rllib_rows,) = ours[Columns.STATE_IN].values(), rllibs[Columns.STATE_IN].values()
    np.testing.assert_array_equal(
        np.stack([row["h"] for row in ours_rows]), np.stack([row["h"] for row in rllib_rows])
    )


def _full_state_episode(trajectory) -> SingleAgentEpisode:
    """The same chunk as RLlib's own env runner stores it: a STATE_OUT after every decision,
    the state before decision 0 as its lookback (`_recorded_arrays`' states)."""
    rows = trajectory.observations[:-1, 0]  # the row of each decision
    states = np.concatenate([[rows[0] - 0.5], rows])
    return SingleAgentEpisode(
        observations=list(trajectory.observations),
        actions=list(trajectory.actions),
        rewards=list(trajectory.rewards),
        extra_model_outputs={
            Columns.STATE_OUT: InfiniteLookbackBuffer(
                data={"h": np.repeat(states[:, None], 3, axis=1)}, lookback=1
            )
        },
        terminated=trajectory.terminated,
        truncated=trajectory.truncated,
        len_lookback_buffer=0,
        t_started=trajectory.t_started,
    ).to_numpy()


def _learner_state_ins(piece, episodes: list) -> list[np.ndarray]:
    """Each episode's sequence STATE_INs as PPO's learner pipeline builds them: RLlib first
    appends the bootstrap step to every episode (`AddOneTsToEpisodesAndTruncate`), then
    `piece` reads the states."""
    AddOneTsToEpisodesAndTruncate()(rl_module=None, batch={}, episodes=episodes, shared_data={})
    batch = piece(rl_module=_Module(), batch={}, episodes=episodes)
    return [
        np.concatenate([np.reshape(r["h"], (-1, 3)) for r in rows])
        for rows in batch[Columns.STATE_IN].values()
    ]


@pytest.mark.parametrize(
    ("steps", "ends", "lengths"),
    [
        (20, (4, 12, 15), [4, 8, 3, 5]),  # ended pieces of 4 and 8 steps
        (13, (5,), [5, 8]),  # an unbroken fragment of 8 steps
        (12, (), [12]),
    ],
)
@pytest.mark.parametrize("acting_now", [True, False])
@pytest.mark.parametrize("t_started", [0, 7])
def test_the_bootstrap_step_starts_from_the_state_after_the_last_decision(
    steps, ends, lengths, acting_now, t_started
) -> None:
    """A cut of the array runner's arrays, through the bootstrap step and our piece, against
    the same chunks with a STATE_OUT per step through RLlib's. When a chunk's length is a
    multiple of max_seq_len, the bootstrap step starts a sequence of its own, whose STATE_IN
    is the state after the chunk's last decision (the critic reads it with
    `critic_input: memory`). `acting_now=False`: the last decision stays open (turn-based),
    so the open piece is one step shorter."""
    arrays = _recorded_arrays(steps=steps, ends=ends)
    current_obs = np.full((1, 1, 2), steps + 1.0, np.float32)
    cut = cut_seat(
        arrays, game=0, seat=0, acting_now=acting_now, current_obs=current_obs, t_started=t_started
    )
    want_lengths = lengths if acting_now else [*lengths[:-1], lengths[-1] - 1]
    assert [len(t) for t in cut.trajectories] == want_lengths
    space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
    ours = [
        to_episode(
            t,
            runner_tag="t",
            agent_ids=["p0"],
            module_ids=[None],
            observation_space=space,
            action_space=gym.spaces.Discrete(3),
        )
        for t in cut.trajectories
    ]
    reference = [_full_state_episode(t) for t in cut.trajectories]
    got = _learner_state_ins(ChunkStatesToBatch(), ours)
    want = _learner_state_ins(AddStatesFromEpisodesToBatch(as_learner_connector=True), reference)
    assert [len(w) for w in want] == [-(-(n + 1) // MAX_SEQ_LEN) for n in want_lengths]
    for length, ours_rows, rllib_rows in zip(want_lengths, got, want, strict=True):
        np.testing.assert_array_equal(ours_rows, rllib_rows, err_msg=f"chunk of {length} steps")
