"""`evaluation/arena_games.py`: the duel's vectorized arena as episode records for `rlp eval`
and evaluation during training (numbering, seats, outcomes, components), without Ray."""

import pytest

from rl_platform.envs.duel.pettingzoo_env import action_space, observation_space
from rl_platform.evaluation import arena_games
from rl_platform.evaluation.arena_games import arena_episodes, games_per_seat
from rl_platform.evaluation.eval import OPPONENT_KEY, POLICY_KEY, evaluate
from rl_platform.evaluation.summary import summarize
from rl_platform.policies import EnvContext, load_policy
from rl_platform.teachers import DUEL_ENV

SETTINGS = {"max_steps": 300, "stocks": 1, "seed": 123, "render_mode": None}


def _policies(policy: str, opponent: str) -> dict:
    context = EnvContext(DUEL_ENV, observation_space(), action_space())
    return {
        POLICY_KEY: load_policy(f"scripted://duel/{policy}", env=context, sample=False),
        OPPONENT_KEY: load_policy(f"scripted://duel/{opponent}", env=context, sample=False),
    }


@pytest.mark.parametrize(
    ("seat", "expected"), [("first", (5, 0)), ("second", (0, 5)), ("alternate", (3, 2))]
)
def test_games_per_seat(seat: str, expected: tuple[int, int]) -> None:
    assert games_per_seat(5, seat) == expected


def test_alternating_records_are_numbered_and_seated_like_the_rollout() -> None:
    records = arena_episodes(
        _policies("based", "constant"), episodes=5, seat="alternate", seed=0, env_kwargs=SETTINGS
    )
    assert [r.index for r in records] == [0, 1, 2, 3, 4]
    for record in records:
        policy_agent = "player_0" if record.index % 2 == 0 else "player_1"
        opponent_agent = "player_1" if policy_agent == "player_0" else "player_0"
        assert record.seats == {policy_agent: POLICY_KEY, opponent_agent: OPPONENT_KEY}
        assert record.outcomes == {policy_agent: "win", opponent_agent: "loss"}
        assert 0 < record.length <= 300  # the spec's game settings reached the arena
        assert record.components[policy_agent]["damage_dealt"] > 0
        assert record.components[opponent_agent]["damage_dealt"] == 0.0
        assert record.returns[policy_agent] > record.returns[opponent_agent]
    summary = summarize(records, POLICY_KEY)
    assert summary["seats"] == 5 and summary["win_rate"] == 1.0
    assert {r.ended_by for r in records} == {"knockout"} and summary["timed_out_rate"] == 0.0


def test_games_nobody_finishes_end_on_the_clock() -> None:
    records = arena_episodes(
        _policies("constant", "constant"),
        episodes=4,
        seat="alternate",
        seed=0,
        env_kwargs={"max_steps": 50},
    )
    summary = summarize(records, POLICY_KEY)
    assert summary["timed_out_rate"] == 1.0 and summary["draw_rate"] == 1.0
    assert summary["length_max"] == 50


def test_a_mirror_match_splits_evenly_between_the_seats() -> None:
    records = arena_episodes(
        _policies("random", "random"), episodes=400, seat="alternate", seed=1, env_kwargs={}
    )
    summary = summarize(records, POLICY_KEY)
    # The same agent on both sides: the evaluated one's share of wins is a coin flip.
    assert summary["win_rate"] + summary["draw_rate"] + summary["loss_rate"] == pytest.approx(1.0)
    assert 0.4 < summary["win_rate"] < 0.6


def test_rlp_eval_plays_the_duel_in_the_arena_unless_cut_by_max_steps() -> None:
    arena = evaluate(
        policy="scripted://duel/based",
        opponent="scripted://duel/constant",
        env="duel",
        episodes=64,
        seat="alternate",
    )
    assert arena["episodes"] == 64 and arena["win_rate"] == 1.0
    assert "cut_by_max_steps" not in arena and arena["length_max"] <= 1200
    cut = evaluate(
        policy="scripted://duel/based",
        opponent="scripted://duel/constant",
        env="duel",
        episodes=2,
        max_steps=5,
    )
    assert cut["cut_by_max_steps"] == 2 and "win_rate" not in cut  # the rollout's path
    assert "timed_out_rate" not in cut  # a cut game did not end at all
    rollout = evaluate(
        policy="scripted://duel/based",
        opponent="scripted://duel/constant",
        env="duel",
        episodes=2,
        max_steps=5000,  # never reached: the rollout plays the games to their end
    )
    assert rollout["win_rate"] == 1.0 and rollout["timed_out_rate"] == 0.0


def test_games_over_are_counted_while_a_chunk_plays(monkeypatch) -> None:
    """A long `rlp eval`'s progress (issue #59): the arena reports the games over after each
    frame, counted across chunks and seats, up to every game, before the chunk's records."""
    monkeypatch.setattr(arena_games, "ARENA_CHUNK", 2)  # 5 games alternating: 2+1, then 2
    seen: list[int] = []
    records = arena_games.arena_records(
        _policies("based", "constant"), episodes=5, seat="alternate", seed=0,
        env_kwargs=SETTINGS, on_games_done=seen.append,
    )  # fmt: skip
    first = next(records)  # the first chunk's frames all reported before its first record
    assert first.index == 0 and seen and seen[-1] == 2
    list(records)
    assert seen == sorted(seen) and seen[-1] == 5
    assert len(seen) > 5  # frame by frame, not once per chunk
