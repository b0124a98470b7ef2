"""Constant-memory opponent slots: K fixed opponent modules that frozen members rotate through.

The learner side never grows: frozen members (snapshots, checkpoints) are played through K
modules `opponent_0..K-1`, whose weights are swapped between iterations. Learners (main,
exploiters) play as their own module (module id = member id) and scripted agents as
`scripted_<agent>`. Every module id is made by the helpers below, nowhere else.

Planning (`plan_slots`, between iterations):

* If all frozen members any learner wants fit into K slots, they are all loaded and episodes
  sample from the exact target distribution.
* Otherwise pinned members (frozen ids named in the opponent mix) are loaded, and each learner
  that wants other frozen members gets a share of the remaining slots and fills it with draws
  *with replacement* from its target. During the iteration the frozen part of its opponent mass
  is spread by draw counts (count / draws). Averaged over iterations this equals the target
  exactly, while each iteration needs at most K loaded members.
* `assign_slots` keeps members already loaded in their slot and puts new ones into empty slots
  first, then slots holding members no longer wanted, so reloads are minimal.
"""

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.league.matchmaking import draw_from
from rl_platform.league.members import Member, MemberKind

SLOT_PREFIX = "opponent_"
SCRIPTED_PREFIX = "scripted_"


def module_id_for_slot(index: int) -> str:
    if index < 0:
        raise ValueError(f"slot index must be >= 0, got {index}")
    return f"{SLOT_PREFIX}{index}"


def slot_for_module_id(module_id: str) -> int | None:
    """Inverse of `module_id_for_slot`; None for modules that are not opponent slots."""
    suffix = module_id.removeprefix(SLOT_PREFIX)
    if suffix == module_id or not suffix.isdigit():
        return None
    return int(suffix)


def module_id_for_scripted(agent: str) -> str:
    return f"{SCRIPTED_PREFIX}{agent}"


def module_id_for_member(member: Member, *, slot_of: Mapping[str, int]) -> str:
    """The module that plays `member`: its slot if frozen, else its own / scripted module."""
    if member.is_learner:
        return member.id
    if member.kind is MemberKind.SCRIPTED:
        return module_id_for_scripted(member.id)
    if member.id not in slot_of:
        raise UserError(f"league member {member.id!r} is not loaded in any opponent slot")
    return module_id_for_slot(slot_of[member.id])


@dataclass(frozen=True)
class SlotAssignment:
    slots: tuple[str | None, ...]  # member id per slot (None = never filled)
    reload: tuple[int, ...]  # slots whose weights must be (re)loaded before the next iteration


def assign_slots(current: Sequence[str | None], wanted: Sequence[str]) -> SlotAssignment:
    """Place `wanted` members into the slots with the fewest reloads."""
    wanted_set = set(wanted)
    if len(wanted_set) > len(current):
        raise UserError(f"{len(wanted_set)} members to load but only {len(current)} slots")
    slots = list(current)
    placed = {m for m in slots if m in wanted_set}
    seen: set[str] = set()
    stale: list[int] = []  # slots whose member is unwanted (or a duplicate) may be reused
    empty = [i for i, m in enumerate(slots) if m is None]
    for i, member_id in enumerate(slots):
        if member_id is not None and (member_id not in wanted_set or member_id in seen):
            stale.append(i)
        elif member_id is not None:
            seen.add(member_id)
    free = empty + stale
    reload: list[int] = []
    for member_id in dict.fromkeys(wanted):
        if member_id not in placed:
            index = free.pop(0)
            slots[index] = member_id
            reload.append(index)
            placed.add(member_id)
    return SlotAssignment(slots=tuple(slots), reload=tuple(sorted(reload)))


@dataclass(frozen=True)
class OpponentChoice:
    member_id: str
    module_id: str
    probability: float


@dataclass(frozen=True)
class SlotPlan:
    """Slot contents for one iteration and, per learner, the opponents episodes sample from."""

    slots: tuple[str | None, ...]
    reload: tuple[int, ...]
    opponents: Mapping[str, tuple[OpponentChoice, ...]]

    def distribution(self, learner_id: str) -> dict[str, float]:
        return {c.member_id: c.probability for c in self._choices(learner_id)}

    def module_for(self, member_id: str) -> str:
        for choices in self.opponents.values():
            for choice in choices:
                if choice.member_id == member_id:
                    return choice.module_id
        raise UserError(f"league member {member_id!r} is not an opponent in this plan")

    def _choices(self, learner_id: str) -> tuple[OpponentChoice, ...]:
        try:
            return self.opponents[learner_id]
        except KeyError:
            raise UserError(f"no opponents planned for learner {learner_id!r}") from None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, e.g. to broadcast to env runners or store in league state."""
        return {
            "slots": list(self.slots),
            "reload": list(self.reload),
            "opponents": {
                learner: [[c.member_id, c.module_id, c.probability] for c in choices]
                for learner, choices in self.opponents.items()
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SlotPlan":
        return cls(
            slots=tuple(data["slots"]),
            reload=tuple(data["reload"]),
            opponents={
                learner: tuple(OpponentChoice(m, mod, float(p)) for m, mod, p in choices)
                for learner, choices in data["opponents"].items()
            },
        )


def sample_opponent(plan: SlotPlan, learner_id: str, *, rng: np.random.Generator) -> OpponentChoice:
    """Pick one episode's opponent for `learner_id` (usable on env runners with a local RNG)."""
    choices = {c.member_id: c for c in plan._choices(learner_id)}
    member_id = draw_from({m: c.probability for m, c in choices.items()}, 1, rng=rng)[0]
    return choices[member_id]


def plan_slots(
    *,
    num_slots: int,
    current: Sequence[str | None],
    targets: Mapping[str, Mapping[str, float]],
    members: Mapping[str, Member],
    pinned: Collection[str] = (),
    rng: np.random.Generator,
) -> SlotPlan:
    """Choose slot contents and per-learner episode distributions from target distributions."""
    if len(current) != num_slots:
        current = [*current[:num_slots], *[None] * (num_slots - len(current))]
    needed = list(dict.fromkeys(m for t in targets.values() for m in t if members[m].is_frozen))
    if len(needed) <= num_slots:
        episode = {learner: dict(target) for learner, target in targets.items()}
        loaded = needed
    else:
        episode, loaded = _draw_slots(num_slots, targets, members, set(pinned), rng)
    assignment = assign_slots(current, loaded)
    slot_of = {m: i for i, m in enumerate(assignment.slots) if m is not None and m in loaded}
    opponents = {
        learner: tuple(
            OpponentChoice(mid, module_id_for_member(members[mid], slot_of=slot_of), p)
            for mid, p in dist.items()
            if p > 0
        )
        for learner, dist in episode.items()
    }
    return SlotPlan(slots=assignment.slots, reload=assignment.reload, opponents=opponents)


def _draw_slots(
    num_slots: int,
    targets: Mapping[str, Mapping[str, float]],
    members: Mapping[str, Member],
    pinned: set[str],
    rng: np.random.Generator,
) -> tuple[dict[str, dict[str, float]], list[str]]:
    def drawable(member_id: str) -> bool:
        return members[member_id].is_frozen and member_id not in pinned

    pinned = {m for m in pinned if m in members and members[m].is_frozen}  # scripted need no slot
    loaded = list(dict.fromkeys(m for t in targets.values() for m in t if m in pinned))
    sampling = [learner for learner, t in targets.items() if any(drawable(m) for m in t)]
    capacity = num_slots - len(loaded)
    if capacity < len(sampling):
        raise UserError(
            f"slots={num_slots} is too few: {len(loaded)} pinned opponent(s) plus at least one "
            f"slot for each of {len(sampling)} learner(s) sampling frozen opponents"
        )
    # Equal shares of the free slots; the remainder goes to the first learners (main first).
    shares = {
        learner: capacity // len(sampling) + (1 if i < capacity % len(sampling) else 0)
        for i, learner in enumerate(sampling)
    }
    episode: dict[str, dict[str, float]] = {}
    for learner, target in targets.items():
        episode[learner] = {m: p for m, p in target.items() if not drawable(m)}
        if learner not in shares:
            continue
        n = shares[learner]
        free = {m: p for m, p in target.items() if drawable(m)}
        mass = sum(free.values())
        counts = Counter(draw_from(free, n, rng=rng))
        for member_id, count in counts.items():
            episode[learner][member_id] = mass * count / n
        loaded.extend(m for m in counts if m not in loaded)
    return episode, loaded
