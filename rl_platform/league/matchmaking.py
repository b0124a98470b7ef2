"""Who plays whom: the opponent mix, self-play matchmaking (uniform, latest, PFSP) and roles.

Prioritized fictitious self-play (PFSP) follows AlphaStar (Vinyals et al., 2019, "Grandmaster
level in StarCraft II using multi-agent reinforcement learning", Nature 575): opponent B is
picked with probability proportional to f(P[A beats B]), with

    f_hard(x) = (1 - x) ** p     focus on opponents A still loses to
    f_var(x)  = x * (1 - x)      focus on opponents of similar strength

Opponents A has never played get the prior P = 0.5. If every weight is 0 (A always beats all
opponents under f_hard, or all results are 0/1 under f_var) the choice falls back to uniform.

`mix_pfsp` extends PFSP to the mix's other keys (scripted agents, named members): that share of
their combined weight follows f(P[main beats each]) instead of the fixed weights, so main plays
more of the styles it still loses to, while the rest keeps every key in play: a key whose window
reads 1.0 gets no PFSP games and would otherwise never be checked again.

Roles: `main` follows the opponent mix; a `main_exploiter` plays only the live main; a
`league_exploiter` runs PFSP over every non-learner member (frozen and scripted). A learner with
nothing to play yet plays the live main (a mirror match for main itself).
"""

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from enum import StrEnum
from typing import Self

import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.league.members import Member, MemberKind
from rl_platform.spec.league import SELF_PLAY, LeagueSpec

UNPLAYED_WIN_PROB = 0.5

WinProb = Callable[[str], float | None]  # opponent id -> P[learner beats it], None if unplayed


class MatchmakingMode(StrEnum):
    UNIFORM = "uniform"
    LATEST = "latest"
    PFSP = "pfsp"


class PfspWeighting(StrEnum):
    HARD = "hard"
    VARIANCE = "variance"


def f_hard(x: np.ndarray | float, *, p: float) -> np.ndarray:
    return np.power(1.0 - np.asarray(x, dtype=float), p)


def f_var(x: np.ndarray | float) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x * (1.0 - x)


def pfsp_weights(
    win_probs: Sequence[float | None], *, weighting: PfspWeighting | str, p: float = 2.0
) -> np.ndarray:
    """Normalized PFSP sampling probabilities for opponents with the given P[learner wins]."""
    if not win_probs:
        return np.zeros(0)
    x = np.array([UNPLAYED_WIN_PROB if v is None else v for v in win_probs], dtype=float)
    hard = PfspWeighting(weighting) is PfspWeighting.HARD
    weights = f_hard(x, p=p) if hard else f_var(x)
    total = weights.sum()
    return weights / total if total > 0 else np.full(len(x), 1.0 / len(x))


def normalize_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """Mix weights scaled to sum 1; zero-weight classes are dropped."""
    if any(w < 0 for w in mix.values()):
        raise UserError(f"opponent_mix weights must be >= 0, got {dict(mix)}")
    total = float(sum(mix.values()))
    if total <= 0:
        raise UserError(f"opponent_mix weights must sum to > 0, got {dict(mix)}")
    return {key: w / total for key, w in mix.items() if w > 0}


def mix_with_pfsp(
    mix: Mapping[str, float],
    win_prob: WinProb,
    *,
    share: float,
    weighting: PfspWeighting | str,
    p: float,
) -> dict[str, float]:
    """The mix, in its order, with `share` of the combined weight of its keys other than
    self_play handed out among them by PFSP and the rest by their fixed weights."""
    members = [key for key in mix if key != SELF_PLAY]
    if share == 0 or not members:
        return dict(mix)
    total = sum(mix[key] for key in members)
    pfsp = pfsp_weights([win_prob(k) for k in members], weighting=weighting, p=p)
    shared = {key: total * float(q) for key, q in zip(members, pfsp, strict=True)}
    return {
        key: w if key == SELF_PLAY else (1 - share) * w + share * shared[key]
        for key, w in mix.items()
    }


def latest_member(candidates: Sequence[Member]) -> Member:
    """Most recent by creation step; registration order breaks ties (later wins)."""
    order = {m.id: i for i, m in enumerate(candidates)}
    return max(candidates, key=lambda m: (m.created_at_step, order[m.id]))


def _main_of(members: Sequence[Member]) -> Member:
    for member in members:
        if member.kind is MemberKind.MAIN:
            return member
    raise UserError("the league has no main member")


class Matchmaker:
    """Opponent distributions per learner, sampled with an explicit, saveable numpy Generator."""

    def __init__(
        self,
        *,
        mix: Mapping[str, float],
        mode: MatchmakingMode | str = MatchmakingMode.PFSP,
        weighting: PfspWeighting | str = PfspWeighting.HARD,
        p: float = 2.0,
        seed: int | None = 0,
        mix_keys: Collection[str] = (),
        mix_pfsp: float = 0.0,
    ) -> None:
        self.mix = normalize_mix(mix)
        # Classes named by the mix (or by any phase of its schedule), even at weight 0, are
        # kept out of self_play: a scripted `based` is never drawn as a "past self".
        self.mix_keys = frozenset(mix) | frozenset(mix_keys)
        self.mode = MatchmakingMode(mode)
        self.weighting = PfspWeighting(weighting)
        self.p = p
        if not 0.0 <= mix_pfsp <= 1.0:
            raise UserError(f"mix_pfsp must be in [0, 1], got {mix_pfsp}")
        self.mix_pfsp = mix_pfsp
        self.rng = np.random.default_rng(seed)

    @classmethod
    def for_spec(cls, spec: LeagueSpec, *, env_steps: int = 0, seed: int | None = 0) -> Self:
        """The matchmaker a league with `spec` uses, its mix that of `env_steps` (training
        and `rlp league show` build it here, so they cannot disagree on the mix)."""
        return cls(
            mix=spec.mix_at(env_steps),
            mix_keys=spec.mix_keys,
            mode=spec.matchmaking,
            weighting=spec.pfsp_weighting,
            p=spec.pfsp_p,
            mix_pfsp=spec.mix_pfsp,
            seed=seed,
        )

    def set_mix(self, mix: Mapping[str, float]) -> None:
        """The mix of a schedule's current phase (keys must be among `mix_keys`)."""
        self.mix = normalize_mix(mix)
        self.mix_keys |= frozenset(mix)

    # ----- distributions ---------------------------------------------------------------------
    def distribution(
        self, learner: Member, *, members: Sequence[Member], win_prob: WinProb
    ) -> dict[str, float]:
        """Target P[opponent] for one game of `learner` (member id -> probability, sums to 1)."""
        if learner.kind is MemberKind.MAIN_EXPLOITER:
            return {_main_of(members).id: 1.0}
        if learner.kind is MemberKind.LEAGUE_EXPLOITER:
            pool = [m for m in members if not m.is_learner]
            if not pool:
                return {_main_of(members).id: 1.0}
            probs = pfsp_weights([win_prob(m.id) for m in pool], weighting=self.weighting, p=self.p)
            return {m.id: float(q) for m, q in zip(pool, probs, strict=True)}
        return self._main_distribution(learner, members, win_prob)

    def _main_distribution(
        self, learner: Member, members: Sequence[Member], win_prob: WinProb
    ) -> dict[str, float]:
        known = {m.id for m in members}
        weights = self.mix_in_effect(win_prob)
        dist: dict[str, float] = {}
        for key, weight in weights.items():
            if key == SELF_PLAY:
                for member_id, q in self.self_play(
                    learner, members=members, win_prob=win_prob
                ).items():
                    dist[member_id] = dist.get(member_id, 0.0) + weight * q
            elif key in known:
                dist[key] = dist.get(key, 0.0) + weight
            else:
                raise UserError(
                    f"opponent_mix key {key!r} is neither 'self_play' nor a league member; "
                    f"members: {sorted(known)}"
                )
        return dist

    def mix_in_effect(self, win_prob: WinProb) -> dict[str, float]:
        """The mix with this matchmaker's `mix_pfsp` applied (`mix_with_pfsp`)."""
        return mix_with_pfsp(
            self.mix, win_prob, share=self.mix_pfsp, weighting=self.weighting, p=self.p
        )

    def self_play(
        self, learner: Member, *, members: Sequence[Member], win_prob: WinProb
    ) -> dict[str, float]:
        """The `self_play` class: frozen members not named in the mix, by matchmaking mode."""
        candidates = [m for m in members if m.is_frozen and m.id not in self.mix_keys]
        if not candidates:
            return {learner.id: 1.0}  # nothing frozen yet: mirror match against itself
        if self.mode is MatchmakingMode.LATEST:
            return {latest_member(candidates).id: 1.0}
        if self.mode is MatchmakingMode.UNIFORM:
            return {m.id: 1.0 / len(candidates) for m in candidates}
        probs = pfsp_weights(
            [win_prob(m.id) for m in candidates], weighting=self.weighting, p=self.p
        )
        return {m.id: float(q) for m, q in zip(candidates, probs, strict=True)}

    # ----- RNG state -------------------------------------------------------------------------
    def get_state(self) -> str:
        """The Generator's exact state as a JSON string (128-bit ints stay exact as text)."""
        return json.dumps(self.rng.bit_generator.state, sort_keys=True)

    def set_state(self, state: str) -> None:
        self.rng.bit_generator.state = json.loads(state)


def draw_from(distribution: Mapping[str, float], n: int, *, rng: np.random.Generator) -> list[str]:
    """`n` draws with replacement; the dict's order fixes the outcome for a given RNG state."""
    ids = list(distribution)
    if not ids:
        raise UserError("cannot sample an opponent from an empty distribution")
    probs = np.array([distribution[i] for i in ids], dtype=float)
    return [ids[i] for i in rng.choice(len(ids), size=n, p=probs / probs.sum())]
