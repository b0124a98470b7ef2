"""Policy URIs, the scripted-policy registry, seat allocation and result aggregation (no Ray)."""

import gymnasium as gym
import numpy as np
import pytest

from rl_platform.base.errors import UserError
from rl_platform.evaluation.multi import allocate_seats, parse_share, seat_counts
from rl_platform.evaluation.rollout import EpisodeRecord, outcomes_of
from rl_platform.evaluation.summary import head_to_head, summarize
from rl_platform.policies import PolicyKind, RandomPolicy, parse_policy_uri
from rl_platform.teachers import get_scripted, scripted_policies


@pytest.mark.parametrize(
    ("text", "path", "checkpoint"),
    [
        ("checkpoint://runs/cp/2025", "runs/cp/2025", None),
        ("checkpoint:///abs/runs/cp/2025/", "/abs/runs/cp/2025", None),
        ("checkpoint://runs/cp/2025/iter_000010", "runs/cp/2025", "iter_000010"),
        ("checkpoint://runs/cp/2025/checkpoints/iter_000010", "runs/cp/2025", "iter_000010"),
        ("checkpoint://runs/cp/2025/checkpoints", "runs/cp/2025", None),
        ("checkpoint://runs/cp/2025/latest", "runs/cp/2025", "latest"),
    ],
)
def test_checkpoint_uris(text: str, path: str, checkpoint: str | None) -> None:
    uri = parse_policy_uri(text)
    assert (uri.kind, uri.path, uri.checkpoint) == (PolicyKind.CHECKPOINT, path, checkpoint)
    assert uri.text == text and uri.module is None and uri.sample is None


def test_query_parameters() -> None:
    uri = parse_policy_uri("checkpoint://runs/duel/1?module=opponent_0&sample=yes")
    assert uri.module == "opponent_0" and uri.sample is True
    assert parse_policy_uri("league://runs/duel/1/main_v2?sample=0").sample is False
    scripted = parse_policy_uri("scripted://cartpole/balance?angular_gain=0.7")
    assert (scripted.env, scripted.name, scripted.params) == (
        "cartpole",
        "balance",
        {"angular_gain": "0.7"},
    )


def test_league_random_and_scripted() -> None:
    league = parse_policy_uri("league://runs/duel/20250101/main_v3")
    assert (league.kind, league.path, league.name) == (
        PolicyKind.LEAGUE,
        "runs/duel/20250101",
        "main_v3",
    )
    assert parse_policy_uri(" random ").kind == PolicyKind.RANDOM
    scripted = parse_policy_uri("scripted://duel/based")
    assert (scripted.kind, scripted.env, scripted.name) == (PolicyKind.SCRIPTED, "duel", "based")
    exported = parse_policy_uri("policy:///abs/champion.safetensors?sample=true")
    assert (exported.kind, exported.path, exported.sample) == (
        PolicyKind.POLICY,
        "/abs/champion.safetensors",
        True,
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("chekpoint://runs/x", "Did you mean checkpoint://"),
        ("scriptd://duel/based", "Did you mean scripted://"),
        ("runs/cartpole/2025", "write checkpoint://runs/cartpole/2025"),
        ("", "empty policy"),
        ("checkpoint://", "missing run folder"),
        ("scripted://duel", "expected scripted://ENV/NAME"),
        ("league://main_v3", "expected league://RUN_DIR/MEMBER"),
        ("random://x", "takes no path"),
        ("checkpoint://runs/x?modul=main", "unknown parameter(s) ['modul']"),
        ("checkpoint://runs/x?module=a&module=b", "given twice"),
        ("checkpoint://runs/x?sample=maybe", "expected true or false"),
        ("checkpoint://runs/x?module", "key=value"),
        ("policy://", "missing file"),
        ("policy://runs/x/policy.pt", "takes a .safetensors file"),
        ("policy://p.safetensors?module=main", "unknown parameter(s) ['module']"),
    ],
)
def test_bad_uris_explain_themselves(text: str, message: str) -> None:
    with pytest.raises(UserError) as excinfo:
        parse_policy_uri(text)
    assert message in str(excinfo.value)


def test_scripted_registry_lookup_and_errors() -> None:
    uris = {entry.uri for entry in scripted_policies()}
    assert {"scripted://duel/based", "scripted://cartpole/balance"} <= uris
    assert all(entry.description for entry in scripted_policies())
    assert get_scripted("duel", "based").env_id == "rlp/Duel-v0"
    with pytest.raises(UserError, match="Did you mean 'based'"):
        get_scripted("duel", "basd")
    with pytest.raises(UserError, match="Did you mean 'cartpole'"):
        get_scripted("cartpol", "balance")
    with pytest.raises(UserError, match="unknown parameter"):
        get_scripted("cartpole", "balance").build({"gain": "1"})
    with pytest.raises(UserError, match="takes no parameters"):
        get_scripted("duel", "based").build({"x": "1"})


def _episode_return(act, seed: int) -> float:
    env = gym.make("CartPole-v1")
    obs, _ = env.reset(seed=seed)
    total, over = 0.0, False
    while not over:
        obs, reward, terminated, truncated, _ = env.step(int(act(obs[None], None)[0]))
        total, over = total + float(reward), terminated or truncated
    return total


def test_cartpole_balance_controller_balances_and_its_damping_matters() -> None:
    entry = get_scripted("cartpole", "balance")
    assert [_episode_return(entry.build({}), seed) for seed in range(3)] == [500.0] * 3
    undamped = entry.build({"angular_gain": "0", "position_gain": "0"})
    assert max(_episode_return(undamped, seed) for seed in range(3)) < 200.0


def test_random_policy_respects_action_masks_and_spaces() -> None:
    rng = np.random.default_rng(0)
    policy = RandomPolicy("random", gym.spaces.Discrete(7))
    mask = np.zeros((50, 7), np.float32)
    mask[:, [2, 5]] = 1.0
    actions = policy.act({"observations": np.zeros((50, 84)), "action_mask": mask}, rng, keys=[])
    assert set(actions.tolist()) == {2, 5}
    box = RandomPolicy("random", gym.spaces.Box(-2.0, -1.0, (3,), np.float32))
    sampled = box.act(np.zeros((20, 4)), rng, keys=[])
    assert sampled.shape == (20, 3) and sampled.min() >= -2.0 and sampled.max() <= -1.0


def test_policy_shares_and_seat_allocation() -> None:
    share = parse_share("scripted://duel/based,proportion=3")
    assert share.uri.name == "based" and share.proportion == 3.0
    assert parse_share("random").proportion == 1.0
    for bad in ("random,proportion=0", "random,weight=2", "random,proportion=x"):
        with pytest.raises(UserError):
            parse_share(bad)
    assert seat_counts([3, 5], 16) == [6, 10]
    assert seat_counts([1, 1, 1], 4) == [2, 1, 1] and sum(seat_counts([2, 7], 13)) == 13
    plan = allocate_seats(
        ["a", "b"], [3, 5], episodes=8, agents=["p0", "p1"], rng=np.random.default_rng(1)
    )
    seats = [key for episode in plan for key in episode.values()]
    assert len(plan) == 8 and seats.count("a") == 6 and seats.count("b") == 10


def test_outcomes_from_info_or_returns() -> None:
    assert outcomes_of({"p0": 1.0, "p1": -1.0}, {}) == {"p0": "win", "p1": "loss"}
    assert outcomes_of({"p0": 0.0, "p1": 0.0}, {}) == {"p0": "draw", "p1": "draw"}
    # The env's own verdict beats shaped returns; a cut game without a verdict has no result.
    infos = {"p0": {"outcome": "loss"}, "p1": {"outcome": "win"}}
    assert outcomes_of({"p0": 5.0, "p1": 1.0}, infos) == {"p0": "loss", "p1": "win"}
    assert outcomes_of({"p0": 5.0, "p1": 1.0}, {}, cut=True) == {"p0": None, "p1": None}
    assert outcomes_of({"agent": 3.0}, {}) == {"agent": None}


def test_summaries_per_policy_and_head_to_head() -> None:
    records = [
        EpisodeRecord(0, {"p0": "a", "p1": "b"}, {"p0": 2.0, "p1": -2.0}, 10,
                      {"p0": "win", "p1": "loss"}, {"p0": {"hit": 1.0}}),
        EpisodeRecord(1, {"p0": "b", "p1": "a"}, {"p0": 1.0, "p1": -1.0}, 20,
                      {"p0": "win", "p1": "loss"}, {"p1": {"hit": 3.0}}),
        EpisodeRecord(2, {"p0": "a", "p1": "a"}, {"p0": 0.0, "p1": 0.0}, 30,
                      {"p0": "draw", "p1": "draw"}),
    ]  # fmt: skip
    summary = summarize(records, "a")
    assert summary["seats"] == 4
    assert summary["return_mean"] == pytest.approx(0.25)
    assert (summary["return_min"], summary["return_max"]) == (-1.0, 2.0)
    assert summary["win_rate"] == 0.25 and summary["draw_rate"] == 0.5
    assert summary["reward_components"] == {"hit": pytest.approx(1.0)}  # (1 + 3 + 0 + 0) / 4
    table = head_to_head(records, "a")
    assert table["b"] == {"games": 2, "win_rate": 0.5, "draw_rate": 0.0, "loss_rate": 0.5}
    assert table["a"]["games"] == 2 and table["a"]["draw_rate"] == 1.0
