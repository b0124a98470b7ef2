"""`League`: the pool, matchmaking, ratings, snapshots and slots behind one driver-side object.

Typical use by the RLlib adapter (the driver owns the League; env runners only get plans):

    league = League(spec=spec.league, storage=run_dir / "league", seed=seed)  # creates or resumes
    plan = league.plan_slots()              # before training: load plan.reload slots
    ... each finished game: league.record_game(learner_id=..., opponent_id=..., outcome="win")
    ... between iterations:
    report = league.end_iteration(iteration=i, env_steps=steps, get_weights=learner_state)
    # load league.load_weights(report.plan.slots[k]) into module_id_for_slot(k) for k in reload
    league.save()                           # also done by end_iteration

Everything persists to `league.json` under the storage root; opening the same root resumes
exactly (same RNG stream, slots, windows, ratings).
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from loguru import logger

from rl_platform.base.errors import IntegrityError, UserError
from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.league.leaderboard import LeaderboardRow, leaderboard
from rl_platform.league.matchmaking import Matchmaker
from rl_platform.league.members import Member, MemberKind
from rl_platform.league.pool import MANIFEST, LeaguePool, WeightsLike
from rl_platform.league.ratings import Rating, rate_game, with_game
from rl_platform.league.results import Outcome, ResultBook, as_outcome
from rl_platform.league.slots import SlotPlan, plan_slots
from rl_platform.league.snapshots import should_snapshot
from rl_platform.league.state import LeagueState, check_same_members, check_saved_state
from rl_platform.spec.league import SELF_PLAY, LeagueSpec
from rl_platform.storage.folder_storage import FolderStorage

MAIN_ID = MAIN_MODULE_ID


def spec_learners(spec: LeagueSpec) -> list[tuple[MemberKind, str]]:
    """(kind, id) of every learner the spec trains; the id is also its module id."""
    learners = [(MemberKind.MAIN, MAIN_ID)]
    for kind, count in (
        (MemberKind.MAIN_EXPLOITER, spec.roles.main_exploiters),
        (MemberKind.LEAGUE_EXPLOITER, spec.roles.league_exploiters),
    ):
        learners += [(kind, f"{kind.value}_{i}") for i in range(count)]
    return learners


def learner_ids_for(spec: LeagueSpec) -> list[str]:
    """Learner member ids: main, main_exploiter_<i>, league_exploiter_<i>."""
    return [member_id for _, member_id in spec_learners(spec)]


@dataclass(frozen=True)
class IterationReport:
    snapshots: list[Member] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    plan: SlotPlan | None = None


class League:
    """Driver-side league. Not thread-safe; one process writes a given storage root."""

    def __init__(
        self, *, spec: LeagueSpec, storage: FolderStorage | str | Path, seed: int = 0
    ) -> None:
        self.spec = spec
        self.pool, saved = LeaguePool.open(storage, max_snapshots=spec.max_snapshots, prune=True)
        self.matchmaker = Matchmaker.for_spec(spec, seed=seed)
        self.results = ResultBook(window=spec.win_rate_window)
        self._slots: list[str | None] = [None] * spec.slots
        self._plan: SlotPlan | None = None
        self._counters: dict[str, int] = {}
        self._last_snapshot: dict[str, int] = {}
        self._last_snapshot_env_steps: dict[str, int] = {}
        self.iteration = 0
        self.env_steps = 0
        if saved:
            check_saved_state(saved, where=f"{self.pool.storage.uri}/{MANIFEST}")
            self._restore(LeagueState.from_dict(saved))
            logger.info("league: resumed {} members from {}", len(self.pool), self.pool.storage.uri)
        added = self._ensure_spec_members()
        self._check_mix_keys()
        if added or not saved:
            self.save()  # an unchanged reopened league is not rewritten until it changes

    def _ensure_spec_members(self) -> list[str]:
        """Register learners and scripted agents the spec names but the pool lacks."""
        wanted = [*spec_learners(self.spec)]
        wanted += [(MemberKind.SCRIPTED, name) for name in self.spec.scripted_agents]
        added = []
        for kind, member_id in wanted:
            if member_id not in self.pool:
                agent = self.spec.scripted_agents.get(member_id)
                extra = {"agent": agent} if kind is MemberKind.SCRIPTED else {}
                self.pool.add_member(Member(id=member_id, kind=kind, metadata=extra))
                added.append(member_id)
        return added

    def _check_mix_keys(self) -> None:
        unknown = [k for k in self.spec.mix_keys if k != SELF_PLAY and k not in self.pool]
        if unknown:
            raise UserError(
                f"opponent_mix names {unknown}, which are neither 'self_play', scripted agents "
                f"(scripted: {list(self.spec.scripted_agents)}) nor league members "
                f"({self.pool.ids})"
            )

    # ----- queries ---------------------------------------------------------------------------
    @property
    def learner_ids(self) -> list[str]:
        """Learners the spec trains (a learner dropped from the spec stays a rated member)."""
        return learner_ids_for(self.spec)

    @property
    def members(self) -> list[Member]:
        return self.pool.members

    def member(self, member_id: str) -> Member:
        return self.pool.get(member_id)

    @property
    def slots(self) -> list[str | None]:
        """Member id held by each opponent slot (index = slot), None if never filled."""
        return list(self._slots)

    @property
    def plan(self) -> SlotPlan | None:
        return self._plan

    def opponent_distribution(self, learner_id: str) -> dict[str, float]:
        """Target P[opponent member] for `learner_id`, before slot constraints."""
        learner = self._learner(learner_id)
        return self.matchmaker.distribution(
            learner,
            members=self.pool.members,
            win_prob=lambda opp: self.results.win_prob(learner_id, opp),
        )

    def _learner(self, learner_id: str) -> Member:
        member = self.pool.get(learner_id)
        if not member.is_learner:
            raise UserError(f"league member {learner_id!r} is {member.kind}, not a learner")
        return member

    def leaderboard(self) -> list[LeaderboardRow]:
        return leaderboard(self.pool.members, results=self.results, main_id=MAIN_ID)

    def load_weights(self, member_id: str) -> dict[str, torch.Tensor]:
        """Verified CPU tensors of a frozen member (raises IntegrityError if tampered)."""
        return self.pool.load_weights(member_id)

    # ----- games -----------------------------------------------------------------------------
    def record_game(self, *, learner_id: str, opponent_id: str, outcome: Outcome | str) -> None:
        """Update stats, windows and both ratings after one finished game (learner's side)."""
        result = as_outcome(outcome)
        learner = self._learner(learner_id)
        if opponent_id not in self.pool:
            # The opponent was evicted after its episode started; its result has no one to rate.
            logger.warning("league: ignoring a game against removed member {!r}", opponent_id)
            return
        self.results.record(learner_id, opponent_id, outcome=result)
        if opponent_id == learner_id:
            return  # mirror match: no rating information
        opponent = self.pool.get(opponent_id)
        new_l, new_o = rate_game(
            Rating(learner.mu, learner.sigma), Rating(opponent.mu, opponent.sigma), outcome=result
        )
        self.pool.update_member(with_game(learner, result, new_l))
        self.pool.update_member(with_game(opponent, result.flipped(), new_o))

    # ----- slots -----------------------------------------------------------------------------
    def plan_slots(self) -> SlotPlan:
        """Decide slot contents and episode opponents for the next iteration (uses the RNG)."""
        targets = {lid: self.opponent_distribution(lid) for lid in self.learner_ids}
        pinned = [k for k, w in self.matchmaker.mix.items() if k in self.pool and w > 0]
        plan = plan_slots(
            num_slots=self.spec.slots,
            current=self._slots,
            targets=targets,
            members={m.id: m for m in self.pool.members},
            pinned=pinned,
            rng=self.matchmaker.rng,
        )
        self._slots, self._plan = list(plan.slots), plan
        return plan

    # ----- snapshots -------------------------------------------------------------------------
    def add_snapshot(self, *, learner_id: str, weights: WeightsLike, env_steps: int) -> Member:
        """Freeze a deep copy of a learner's weights as `<learner>_v<N>` and save the manifest."""
        member, _ = self._snapshot(learner_id, weights, env_steps)
        return member

    def _snapshot(
        self, learner_id: str, weights: WeightsLike, env_steps: int
    ) -> tuple[Member, list[str]]:
        learner = self._learner(learner_id)
        number = self._counters.get(learner_id, 0) + 1
        member, evicted = self.pool.add_frozen(
            member_id=f"{learner_id}_v{number}",
            weights=weights,
            kind=MemberKind.SNAPSHOT,
            parent_id=learner_id,
            created_at_step=env_steps,
            mu=learner.mu,
            sigma=learner.sigma,
            protected=self.spec.mix_keys,
        )
        # Only after the weights are stored: bookkeeping, then the manifest that registers it.
        self._counters[learner_id] = number
        self._last_snapshot[learner_id] = self.iteration
        self._last_snapshot_env_steps[learner_id] = env_steps
        self.results.reset_learner_window(learner_id)
        for member_id in evicted:
            self.results.forget(member_id)
        self.save()
        logger.info("league: snapshot {} of {} at {} env steps", member.id, learner_id, env_steps)
        return member, evicted

    def add_checkpoint(
        self,
        *,
        member_id: str,
        weights: WeightsLike,
        env_steps: int = 0,
        metadata: Mapping[str, Any] | None = None,
    ) -> Member:
        """Add an external frozen policy (kind `checkpoint`, never evicted) and save."""
        self._check_not_a_snapshot_id(member_id)
        member, _ = self.pool.add_frozen(
            member_id=member_id,
            weights=weights,
            kind=MemberKind.CHECKPOINT,
            created_at_step=env_steps,
            metadata=metadata,
        )
        self.save()
        return member

    def _check_not_a_snapshot_id(self, member_id: str) -> None:
        """`<learner>_v<N>` names are the trainer's future snapshots: taking one would make
        that snapshot collide later, in the middle of a run."""
        for learner_id in learner_ids_for(self.spec):
            if re.fullmatch(rf"{re.escape(learner_id)}_v\d+", member_id):
                raise UserError(
                    f"league member id {member_id!r} is reserved for snapshots of "
                    f"{learner_id!r} ({learner_id}_v1, {learner_id}_v2, ...); choose another id"
                )

    def end_iteration(
        self,
        *,
        iteration: int,
        env_steps: int,
        get_weights: Callable[[str], WeightsLike],
    ) -> IterationReport:
        """Between iterations: snapshot learners that are due, re-plan slots, save.

        `get_weights(learner_id)` is called only for learners being snapshotted.
        """
        self.iteration, self.env_steps = iteration, env_steps
        snapshots: list[Member] = []
        evicted: list[str] = []
        for learner_id in self.learner_ids:
            win_rate, games = self.results.learner_window(learner_id)
            due = should_snapshot(
                iteration=iteration,
                last_snapshot_iteration=self._last_snapshot.get(learner_id),
                snapshot_every=self.spec.snapshot_every,
                win_rate=win_rate,
                games_in_window=games,
                window_size=self.spec.win_rate_window,
                snapshot_win_rate=self.spec.snapshot_win_rate,
                env_steps_since=env_steps - self._last_snapshot_env_steps.get(learner_id, 0),
                snapshot_every_env_steps=self.spec.snapshot_every_env_steps,
            )
            if due:
                member, gone = self._snapshot(learner_id, get_weights(learner_id), env_steps)
                snapshots.append(member)
                evicted += gone
        self.matchmaker.set_mix(self.spec.mix_at(env_steps))
        plan = self.plan_slots()
        self.save()
        return IterationReport(snapshots=snapshots, evicted=evicted, plan=plan)

    # ----- persistence -----------------------------------------------------------------------
    def _state(self) -> LeagueState:
        return LeagueState(
            rng=self.matchmaker.get_state(),
            slots=list(self._slots),
            plan=None if self._plan is None else self._plan.to_dict(),
            results=self.results.to_dict(),
            snapshot_counters=dict(self._counters),
            last_snapshot_iteration=dict(self._last_snapshot),
            last_snapshot_env_steps=dict(self._last_snapshot_env_steps),
            iteration=self.iteration,
            env_steps=self.env_steps,
        )

    def _restore(self, state: LeagueState) -> None:
        self.matchmaker.set_state(state.rng)
        slots = state.slots[: self.spec.slots]
        self._slots = [*slots, *[None] * (self.spec.slots - len(slots))]
        same_slots = len(state.slots) == self.spec.slots
        self._plan = SlotPlan.from_dict(state.plan) if state.plan and same_slots else None
        self.results = ResultBook.from_dict(state.results, window=self.spec.win_rate_window)
        self._counters = dict(state.snapshot_counters)
        self._last_snapshot = dict(state.last_snapshot_iteration)
        self._last_snapshot_env_steps = dict(state.last_snapshot_env_steps)
        self.iteration, self.env_steps = state.iteration, state.env_steps
        # The schedule is a function of env steps: the resumed mix is the one left with.
        self.matchmaker.set_mix(self.spec.mix_at(state.env_steps))

    def save(self) -> None:
        """Atomically write `league.json` (members + state)."""
        self.pool.save(self._state().to_dict())

    def state_dict(self) -> dict[str, Any]:
        """Full league state (JSON-able): member records and `LeagueState`."""
        return {
            "members": [m.model_dump(mode="json") for m in self.pool.members],
            "league": self._state().to_dict(),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore exactly; the saved member set must equal this pool's (else mismatch error)."""
        records = [Member.model_validate(r) for r in state["members"]]
        check_same_members(state_ids=[m.id for m in records], pool_ids=self.pool.ids)
        for member in records:
            if member.weights_sha256 != self.pool.get(member.id).weights_sha256:
                raise IntegrityError(
                    f"league member {member.id!r}: saved state and pool hold different weights"
                )
        self._restore(LeagueState.from_dict(dict(state["league"])))
        for member in records:
            self.pool.update_member(member)
