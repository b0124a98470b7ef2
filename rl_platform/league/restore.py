"""Roll a live league back to the state stored in a training checkpoint (plain Python).

`league.json` is rewritten every iteration, checkpoints only every N iterations, so on resume
the league folder is usually *ahead* of the checkpoint: it may hold snapshots taken after the
checkpoint, and snapshots evicted after it are gone from disk. `restore_league` makes the league
equal to the checkpoint's `League.state_dict()`:

* snapshots taken after the checkpoint are removed (their weights files are deleted at the
  next save, like the training progress they came from); other members added since (a policy
  added with `rlp league add`, a scripted agent added to the spec) are kept as they are;
* members without weights that the pool lacks (learners, scripted agents) are re-added;
* frozen members whose weights were deleted since (evicted after the checkpoint) cannot come
  back: they are dropped from the restored state with a warning, their slots emptied and the
  slot plan discarded so the league plans again. This is the only inexact case.
"""

from collections.abc import Mapping
from typing import Any

from loguru import logger

from rl_platform.league.league import League
from rl_platform.league.members import Member, MemberKind
from rl_platform.league.results import ResultBook


def restore_league(league: League, state: Mapping[str, Any]) -> list[str]:
    """Make `league` equal to `state` (a `League.state_dict()`); returns the ids it had to drop."""
    records = [Member.model_validate(r) for r in state["members"]]
    saved_ids = {m.id for m in records}
    kept = []
    for member in [m for m in league.pool.members if m.id not in saved_ids]:
        if member.kind is MemberKind.SNAPSHOT:
            league.pool.remove(member.id)
        else:
            kept.append(member.model_dump(mode="json"))
    state = {"members": [*state["members"], *kept], "league": state["league"]}
    lost = []
    for member in records:
        if member.id in league.pool:
            continue
        if member.is_frozen:
            lost.append(member.id)
        else:
            league.pool.add_member(member)
    restored = _without(state, lost) if lost else state
    if lost:
        logger.warning(
            "league: members {} in the checkpoint were evicted after it and their weights are "
            "gone; resuming without them",
            lost,
        )
    league.load_state_dict(restored)
    if league.plan is None:
        league.plan_slots()
    league.save()
    return lost


def _without(state: Mapping[str, Any], lost: list[str]) -> dict[str, Any]:
    gone = set(lost)
    inner = dict(state["league"])
    inner["slots"] = [None if s in gone else s for s in inner.get("slots", [])]
    plan = inner.get("plan")
    if plan is not None and gone & set(plan.get("slots", [])):
        inner["plan"] = None
    window = int(inner.get("results", {}).get("window", 1))
    book = ResultBook.from_dict(inner.get("results", {}), window=window)
    for member_id in lost:
        book.forget(member_id)
    inner["results"] = book.to_dict()
    members = [r for r in state["members"] if r["id"] not in gone]
    return {"members": members, "league": inner}
