"""The scripted 1-ply connect-four teacher: wins, blocks, centre preference, legality."""

import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3

from rl_platform.base.errors import UserError
from rl_platform.teachers import scripted_act
from rl_platform.teachers.connect_four import (
    LINES,
    act_one_ply,
    act_random,
    landing_rows,
)

RNG = np.random.default_rng(0)


def _obs(own: list[tuple[int, int]], opp: list[tuple[int, int]], mask=None) -> dict:
    board = np.zeros((1, 6, 7, 2), np.int8)
    for r, c in own:
        board[0, r, c, 0] = 1
    for r, c in opp:
        board[0, r, c, 1] = 1
    legal = np.ones((1, 7), np.int8) if mask is None else np.asarray([mask], np.int8)
    return {"observation": board, "action_mask": legal}


def test_there_are_69_lines_of_four() -> None:
    assert LINES.shape == (69, 4)
    assert len({tuple(sorted(line)) for line in LINES.tolist()}) == 69


def test_empty_board_plays_the_centre_and_pieces_land_at_the_bottom() -> None:
    obs = _obs([], [])
    assert act_one_ply(obs, RNG).tolist() == [3]
    own = np.zeros((1, 6, 7), bool)
    own[0, 5, 3] = True
    assert landing_rows(own, np.zeros_like(own)).tolist() == [[5, 5, 5, 4, 5, 5, 5]]


@pytest.mark.parametrize(
    ("own", "opp", "expected"),
    [
        ([(5, 0), (5, 1), (5, 2)], [(4, 0), (4, 1), (4, 2)], 3),  # horizontal win
        ([(5, 6), (4, 6), (3, 6)], [(5, 5), (4, 5)], 6),  # vertical win
        # rising diagonal (5,0) (4,1) (3,2) -> (2,3) needs column 3 filled to row 3
        ([(5, 0), (4, 1), (3, 2), (5, 2), (4, 3)], [(5, 1), (4, 2), (5, 3), (3, 3)], 3),
    ],
)
def test_takes_an_immediate_win(own, opp, expected) -> None:
    assert act_one_ply(_obs(own, opp), RNG).tolist() == [expected]


def test_blocks_the_opponents_win_and_prefers_its_own_win() -> None:
    threat = [(5, 4), (5, 5), (5, 6)]
    assert act_one_ply(_obs([(5, 0), (4, 0)], threat), RNG).tolist() == [3]
    own_win = [(5, 0), (4, 0), (3, 0)]
    assert act_one_ply(_obs(own_win, threat), RNG).tolist() == [0]


def test_respects_the_mask_and_falls_back_by_centre_order() -> None:
    mask = [1, 1, 1, 0, 1, 1, 1]
    assert act_one_ply(_obs([], [], mask), RNG).tolist() == [2]
    only_edge = [0, 0, 0, 0, 0, 0, 1]
    assert act_one_ply(_obs([], [], only_edge), RNG).tolist() == [6]
    picks = act_random({"observation": np.zeros((500, 84)), "action_mask": np.tile(mask, (500, 1))},
                       np.random.default_rng(1))  # fmt: skip
    assert 3 not in picks and set(picks.tolist()) == {0, 1, 2, 4, 5, 6}


def test_batched_call_equals_row_by_row_and_accepts_flat_rllib_obs() -> None:
    rng = np.random.default_rng(3)
    boards = np.zeros((64, 6, 7, 2), np.float32)
    for b in range(64):
        cells = rng.choice(42, size=rng.integers(0, 20), replace=False)
        for i, cell in enumerate(cells):
            boards[b, cell // 7, cell % 7, i % 2] = 1.0  # positions need not be reachable
    masks = (boards.sum(-1)[:, 0, :] == 0).astype(np.float32)
    batched = act_one_ply({"observations": boards.reshape(64, 84), "action_mask": masks}, RNG)
    rows = [act_one_ply({"observation": boards[i : i + 1], "action_mask": masks[i : i + 1]}, RNG)[0]
            for i in range(64)]  # fmt: skip
    assert batched.tolist() == rows
    assert all(masks[i, a] == 1 for i, a in enumerate(batched) if masks[i].any())


def _play(first, second, seed: int) -> float:
    """One PettingZoo game; returns player_0's final reward."""
    env = connect_four_v3.env()
    env.reset(seed=seed)
    agents = {"player_0": first, "player_1": second}
    rng = np.random.default_rng(seed)
    final = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            final[agent] = reward
            env.step(None)
            continue
        batch = {k: np.asarray(v)[None] for k, v in obs.items()}
        env.step(int(agents[agent](batch, rng)[0]))  # an illegal move would end the game
    return final["player_0"]


def test_one_ply_beats_random_in_real_games_from_both_seats() -> None:
    first = [_play(act_one_ply, act_random, seed) for seed in range(20)]
    second = [-_play(act_random, act_one_ply, seed) for seed in range(20)]
    assert sum(r > 0 for r in first) >= 18 and sum(r > 0 for r in second) >= 18


def test_unknown_agent_names_close_matches() -> None:
    env_id = "pettingzoo/connect_four_v3"
    obs = {"observation": np.zeros((1, 6, 7, 2), np.int8), "action_mask": np.ones((1, 7))}
    assert scripted_act(env_id=env_id, agent="one_ply")(obs, RNG).tolist() == [3]
    with pytest.raises(UserError, match="one_ply"):
        scripted_act(env_id=env_id, agent="one-ply")
