"""Opponent slots: module ids, minimal reloads and unbiased plans under a slot budget."""

from collections import Counter

import numpy as np
import pytest

from rl_platform.base.errors import UserError
from rl_platform.league.members import Member, MemberKind
from rl_platform.league.slots import (
    SlotPlan,
    assign_slots,
    module_id_for_member,
    module_id_for_slot,
    plan_slots,
    sample_opponent,
    slot_for_module_id,
)


def _members(n_snapshots: int) -> dict[str, Member]:
    members = [
        Member(id="main", kind=MemberKind.MAIN),
        Member(id="based", kind=MemberKind.SCRIPTED, metadata={"agent": "based"}),
        Member(id="ckpt", kind=MemberKind.CHECKPOINT),
    ]
    members += [Member(id=f"main_v{i}", kind=MemberKind.SNAPSHOT) for i in range(n_snapshots)]
    return {m.id: m for m in members}


def test_module_id_helpers_round_trip() -> None:
    assert module_id_for_slot(3) == "opponent_3"
    assert slot_for_module_id("opponent_3") == 3
    assert slot_for_module_id("main") is None
    assert slot_for_module_id("opponent_x") is None
    members = _members(1)
    assert module_id_for_member(members["main"], slot_of={}) == "main"
    assert module_id_for_member(members["based"], slot_of={}) == "scripted_based"
    assert module_id_for_member(members["main_v0"], slot_of={"main_v0": 2}) == "opponent_2"
    with pytest.raises(UserError, match="not loaded"):
        module_id_for_member(members["main_v0"], slot_of={})
    with pytest.raises(ValueError):
        module_id_for_slot(-1)


def test_assign_slots_keeps_loaded_members_and_fills_empty_first() -> None:
    result = assign_slots(["a", None, "b", "c"], ["c", "d", "a"])
    assert result.slots == ("a", "d", "b", "c")  # b stays resident: no reload needed for it
    assert result.reload == (1,)
    again = assign_slots(result.slots, ["e", "a", "d", "c"])
    assert again.slots == ("a", "d", "e", "c")
    assert again.reload == (2,)


def test_assign_slots_reuses_duplicates_and_rejects_overflow() -> None:
    assert assign_slots(["a", "a"], ["a", "b"]).slots == ("a", "b")
    with pytest.raises(UserError, match="3 members to load but only 2 slots"):
        assign_slots([None, None], ["a", "b", "c"])


def test_plan_within_capacity_uses_exact_targets() -> None:
    members = _members(2)
    target = {"main_v0": 0.5, "main_v1": 0.3, "based": 0.2}
    plan = plan_slots(
        num_slots=3,
        current=[None] * 3,
        targets={"main": target},
        members=members,
        rng=np.random.default_rng(0),
    )
    assert plan.slots == ("main_v0", "main_v1", None)
    assert plan.reload == (0, 1)
    assert plan.distribution("main") == pytest.approx(target)
    assert plan.module_for("based") == "scripted_based"
    assert plan.module_for("main_v1") == "opponent_1"


def test_plan_over_capacity_is_unbiased_and_bounded() -> None:
    members = _members(6)
    target = {
        "ckpt": 0.2,
        "based": 0.1,
        **{f"main_v{i}": 0.7 * w for i, w in enumerate([0.05, 0.05, 0.1, 0.2, 0.25, 0.35])},
    }
    rng = np.random.default_rng(5)
    current: list[str | None] = [None] * 3
    average: Counter = Counter()
    reloads = []
    n_plans = 4000
    for _ in range(n_plans):
        plan = plan_slots(
            num_slots=3,
            current=current,
            targets={"main": target},
            members=members,
            pinned=["ckpt"],
            rng=rng,
        )
        loaded = {m for m in plan.slots if m is not None}
        dist = plan.distribution("main")
        assert set(dist) - {"based", "main"} <= loaded  # every playable frozen member is loaded
        assert "ckpt" in loaded and dist["ckpt"] == pytest.approx(0.2)
        assert sum(dist.values()) == pytest.approx(1.0)
        average.update(dist)
        reloads.append(len(plan.reload))
        current = list(plan.slots)
    for member_id, p in target.items():
        assert average[member_id] / n_plans == pytest.approx(p, abs=0.01), member_id
    assert max(reloads[1:]) <= 2  # the pinned checkpoint never reloads


def test_plan_gives_every_sampling_learner_a_slot_or_fails_clearly() -> None:
    members = _members(4)
    members["league_exploiter_0"] = Member(
        id="league_exploiter_0", kind=MemberKind.LEAGUE_EXPLOITER
    )
    targets = {
        "main": {f"main_v{i}": 0.25 for i in range(4)},
        "league_exploiter_0": {"main_v0": 0.5, "main_v3": 0.5},
    }
    plan = plan_slots(
        num_slots=3,
        current=[None] * 3,
        targets=targets,
        members=members,
        rng=np.random.default_rng(1),
    )
    assert sum(plan.distribution("league_exploiter_0").values()) == pytest.approx(1.0)
    with pytest.raises(UserError, match="slots=2 is too few"):
        plan_slots(
            num_slots=2,
            current=[None] * 2,
            targets=targets,
            members=members,
            pinned=["main_v1"],
            rng=np.random.default_rng(1),
        )


def test_sample_opponent_follows_plan_and_plan_round_trips() -> None:
    members = _members(2)
    target = {"main_v0": 0.6, "main_v1": 0.3, "based": 0.1}
    plan = plan_slots(
        num_slots=2,
        current=[None, None],
        targets={"main": target},
        members=members,
        rng=np.random.default_rng(0),
    )
    restored = SlotPlan.from_dict(plan.to_dict())
    assert restored == plan
    rng_a, rng_b = np.random.default_rng(4), np.random.default_rng(4)
    picks = [sample_opponent(plan, "main", rng=rng_a) for _ in range(3000)]
    assert [sample_opponent(restored, "main", rng=rng_b) for _ in range(3000)] == picks
    freq = Counter(p.member_id for p in picks)
    assert freq["main_v0"] / 3000 == pytest.approx(0.6, abs=0.04)
    assert {p.module_id for p in picks} == {"opponent_0", "opponent_1", "scripted_based"}
    with pytest.raises(UserError, match="no opponents planned"):
        sample_opponent(plan, "ghost", rng=rng_a)
