"""Opponent mix frequencies, PFSP weights, matchmaking modes, roles and exact RNG restore."""

import json
from collections import Counter

import numpy as np
import pytest

from rl_platform.base.errors import UserError
from rl_platform.league.matchmaking import (
    Matchmaker,
    draw_from,
    f_hard,
    f_var,
    normalize_mix,
    pfsp_weights,
)
from rl_platform.league.members import Member, MemberKind

N_SAMPLES = 20_000


def _chi_square_p_ok(counts: Counter, expected_probs: dict[str, float], n: int) -> bool:
    """True if counts are consistent with expected_probs at alpha = 0.001."""
    ids = list(expected_probs)
    observed = np.array([counts.get(i, 0) for i in ids], dtype=float)
    expected = np.array([expected_probs[i] * n for i in ids])
    assert observed.sum() == n, f"samples outside the expected support: {counts}"
    try:
        from scipy.stats import chisquare
    except ImportError:  # manual statistic vs the 0.999 quantile (Wilson-Hilferty approximation)
        stat = float(((observed - expected) ** 2 / expected).sum())
        k = len(ids) - 1
        critical = k * (1 - 2 / (9 * k) + 3.09 * (2 / (9 * k)) ** 0.5) ** 3
        return stat < critical
    return chisquare(observed, expected).pvalue > 1e-3


def _members(*snapshots: tuple[str, int]) -> list[Member]:
    members = [
        Member(id="main", kind=MemberKind.MAIN),
        Member(id="based", kind=MemberKind.SCRIPTED, metadata={"agent": "based"}),
        Member(id="constant", kind=MemberKind.SCRIPTED, metadata={"agent": "constant"}),
    ]
    members += [
        Member(id=mid, kind=MemberKind.SNAPSHOT, parent_id="main", created_at_step=step)
        for mid, step in snapshots
    ]
    return members


def test_f_hard_and_f_var_formulas() -> None:
    assert f_hard(0.25, p=2.0) == pytest.approx(0.5625)
    assert f_hard(1.0, p=3.0) == pytest.approx(0.0)
    assert f_var(0.5) == pytest.approx(0.25)
    assert f_var(0.9) == pytest.approx(0.09)


def test_pfsp_hard_favours_opponents_main_struggles_against() -> None:
    # P[main wins] = 0.9, 0.5, 0.2, unplayed (prior 0.5): weights (1-x)^2.
    probs = pfsp_weights([0.9, 0.5, 0.2, None], weighting="hard", p=2.0)
    raw = np.array([0.01, 0.25, 0.64, 0.25])
    np.testing.assert_allclose(probs, raw / raw.sum())
    assert probs.argmax() == 2


def test_pfsp_variance_favours_even_matchups() -> None:
    probs = pfsp_weights([0.9, 0.5, 0.2, None], weighting="variance")
    raw = np.array([0.09, 0.25, 0.16, 0.25])
    np.testing.assert_allclose(probs, raw / raw.sum())


def test_pfsp_all_zero_weights_fall_back_to_uniform() -> None:
    np.testing.assert_allclose(pfsp_weights([1.0, 1.0], weighting="hard"), [0.5, 0.5])
    np.testing.assert_allclose(pfsp_weights([0.0, 1.0], weighting="variance"), [0.5, 0.5])


def test_mix_frequencies_match_weights_with_pfsp_inside_self_play() -> None:
    members = _members(("main_v1", 10), ("main_v2", 20), ("main_v3", 30))
    win_probs = {"main_v1": 0.9, "main_v2": 0.5, "main_v3": 0.2}
    mm = Matchmaker(mix={"self_play": 0.8, "based": 0.15, "constant": 0.05}, mode="pfsp", seed=3)
    dist = mm.distribution(members[0], members=members, win_prob=win_probs.get)
    raw = np.array([0.01, 0.25, 0.64]) / 0.90
    expected = {
        "based": 0.15,
        "constant": 0.05,
        "main_v1": 0.8 * raw[0],
        "main_v2": 0.8 * raw[1],
        "main_v3": 0.8 * raw[2],
    }
    assert dist == pytest.approx(expected)
    counts = Counter(draw_from(dist, N_SAMPLES, rng=mm.rng))
    assert _chi_square_p_ok(counts, expected, N_SAMPLES)
    # The test is able to fail: the same draws do not fit a uniform mix.
    assert not _chi_square_p_ok(counts, dict.fromkeys(expected, 0.2), N_SAMPLES)


def test_mix_pfsp_shares_the_scripted_weight_by_main_results() -> None:
    members = _members(("main_v1", 10))
    win_probs = {"based": 0.9, "constant": 0.5, "main_v1": 0.5}
    mix = {"self_play": 0.5, "based": 0.25, "constant": 0.25}
    mm = Matchmaker(mix=mix, mode="pfsp", mix_pfsp=0.6, seed=3)
    dist = mm.distribution(members[0], members=members, win_prob=win_probs.get)
    pfsp = np.array([0.01, 0.25]) / 0.26  # hard (1-x)^2 over based, constant
    expected = {
        "main_v1": 0.5,  # self_play keeps its share
        "based": 0.4 * 0.25 + 0.6 * 0.5 * pfsp[0],
        "constant": 0.4 * 0.25 + 0.6 * 0.5 * pfsp[1],
    }
    assert dist == pytest.approx(expected)
    assert list(dist) == ["main_v1", "based", "constant"]  # the mix's order fixes the draws
    in_effect = mm.mix_in_effect(win_probs.get)  # what `league/mix/<key>` logs
    assert in_effect == pytest.approx(
        {"self_play": 0.5} | {k: expected[k] for k in mix if k in expected}
    )
    # The fixed part keeps a style main always beats in play.
    win_probs["based"] = 1.0
    assert mm.distribution(members[0], members=members, win_prob=win_probs.get)[
        "based"
    ] == pytest.approx(0.4 * 0.25)
    fixed = Matchmaker(mix=mix, mode="pfsp", seed=3)
    assert fixed.distribution(members[0], members=members, win_prob=win_probs.get)[
        "based"
    ] == pytest.approx(0.25)


def test_mix_pfsp_outside_zero_to_one_is_rejected() -> None:
    with pytest.raises(UserError, match="mix_pfsp"):
        Matchmaker(mix={"based": 1.0}, mix_pfsp=1.5)


def test_uniform_and_latest_modes() -> None:
    members = _members(("main_v1", 10), ("main_v3", 30), ("main_v2", 30))
    main = members[0]
    uniform = Matchmaker(mix={"self_play": 1.0}, mode="uniform").distribution(
        main, members=members, win_prob=dict().get
    )
    assert uniform == pytest.approx(dict.fromkeys(["main_v1", "main_v3", "main_v2"], 1 / 3))
    latest = Matchmaker(mix={"self_play": 1.0}, mode="latest").distribution(
        main, members=members, win_prob=dict().get
    )
    assert latest == {"main_v2": 1.0}  # newest step; registration order breaks the tie


def test_self_play_without_frozen_members_is_a_mirror_match() -> None:
    members = _members()
    mm = Matchmaker(mix={"self_play": 3.0, "based": 1.0}, mode="pfsp")
    assert mm.distribution(members[0], members=members, win_prob=dict().get) == pytest.approx(
        {"main": 0.75, "based": 0.25}
    )


def test_mix_members_are_not_also_drawn_by_self_play() -> None:
    members = _members(("main_v1", 1), ("main_v2", 2))
    mm = Matchmaker(mix={"self_play": 0.5, "main_v1": 0.5}, mode="uniform")
    assert mm.distribution(members[0], members=members, win_prob=dict().get) == pytest.approx(
        {"main_v2": 0.5, "main_v1": 0.5}
    )


def test_roles() -> None:
    members = [
        *_members(("main_v1", 1)),
        Member(id="main_exploiter_0", kind=MemberKind.MAIN_EXPLOITER),
        Member(id="league_exploiter_0", kind=MemberKind.LEAGUE_EXPLOITER),
    ]
    mm = Matchmaker(mix={"self_play": 1.0}, mode="pfsp")
    assert mm.distribution(members[-2], members=members, win_prob=dict().get) == {"main": 1.0}
    league = mm.distribution(
        members[-1], members=members, win_prob={"main_v1": 0.0, "based": 1.0}.get
    )
    # PFSP over every non-learner: based is always beaten -> weight 0, constant unplayed.
    assert league == pytest.approx({"based": 0.0, "constant": 0.25 / 1.25, "main_v1": 1 / 1.25})


def test_unknown_mix_key_and_bad_weights_are_errors() -> None:
    members = _members()
    with pytest.raises(UserError, match="'ghost' is neither"):
        Matchmaker(mix={"ghost": 1.0}).distribution(
            members[0], members=members, win_prob=dict().get
        )
    with pytest.raises(UserError, match=">= 0"):
        normalize_mix({"self_play": -1.0, "based": 2.0})
    with pytest.raises(UserError, match="sum to > 0"):
        normalize_mix({"self_play": 0.0})


def test_rng_state_round_trips_exactly_through_json() -> None:
    dist = {"a": 0.2, "b": 0.3, "c": 0.5}
    first = Matchmaker(mix={"self_play": 1.0}, seed=11)
    draw_from(dist, 17, rng=first.rng)
    saved = json.loads(json.dumps({"rng": first.get_state()}))["rng"]
    expected = draw_from(dist, 200, rng=first.rng)

    second = Matchmaker(mix={"self_play": 1.0}, seed=999)
    assert draw_from(dist, 200, rng=second.rng) != expected
    second.set_state(saved)
    assert draw_from(dist, 200, rng=second.rng) == expected
