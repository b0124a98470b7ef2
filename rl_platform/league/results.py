"""Game outcomes and the win-rate book: all-time pair counts plus moving windows.

Outcomes are always stated from the learner's side. A draw counts as half a win wherever a
"win rate" is computed (PFSP win probabilities, the snapshot threshold, the leaderboard), so
games that always draw read as 0.5, the same as an unplayed opponent.
"""

from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rl_platform.base.errors import UserError


class Outcome(StrEnum):
    WIN = "win"
    DRAW = "draw"
    LOSS = "loss"

    @property
    def score(self) -> float:
        return {Outcome.WIN: 1.0, Outcome.DRAW: 0.5, Outcome.LOSS: 0.0}[self]

    def flipped(self) -> "Outcome":
        return {Outcome.WIN: Outcome.LOSS, Outcome.DRAW: Outcome.DRAW, Outcome.LOSS: Outcome.WIN}[
            self
        ]


def as_outcome(value: "Outcome | str") -> Outcome:
    try:
        return Outcome(value)
    except ValueError:
        raise UserError(f"game outcome must be one of win/draw/loss, got {value!r}") from None


# Windows store one small int per game (1 win, 0 draw, -1 loss) to keep the JSON compact.
_CODE = {Outcome.WIN: 1, Outcome.DRAW: 0, Outcome.LOSS: -1}


def _score(codes: "deque[int] | list[int]") -> float | None:
    return None if not codes else sum((c + 1) / 2 for c in codes) / len(codes)


@dataclass
class PairRecord:
    """Results of `learner` against one opponent, from the learner's side."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    recent: deque[int] = field(default_factory=deque)


class ResultBook:
    """Per-learner and per-(learner, opponent) results with moving windows of `window` games."""

    def __init__(self, *, window: int) -> None:
        if window < 1:
            raise UserError(f"win_rate_window must be >= 1, got {window}")
        self.window = window
        self._learner: dict[str, deque[int]] = {}
        self._pairs: dict[str, dict[str, PairRecord]] = {}

    def record(self, learner_id: str, opponent_id: str, *, outcome: Outcome) -> None:
        code = _CODE[outcome]
        self._learner.setdefault(learner_id, deque(maxlen=self.window)).append(code)
        pair = self._pairs.setdefault(learner_id, {}).setdefault(
            opponent_id, PairRecord(recent=deque(maxlen=self.window))
        )
        pair.recent.append(code)
        if outcome is Outcome.WIN:
            pair.wins += 1
        elif outcome is Outcome.DRAW:
            pair.draws += 1
        else:
            pair.losses += 1

    def learner_window(self, learner_id: str) -> tuple[float | None, int]:
        """(win rate over the learner's last `window` games against anyone, games in window)."""
        codes = self._learner.get(learner_id, deque())
        return _score(codes), len(codes)

    def reset_learner_window(self, learner_id: str) -> None:
        self._learner.pop(learner_id, None)

    def win_prob(self, learner_id: str, opponent_id: str) -> float | None:
        """Windowed P[learner beats opponent], games in both seatings; None if never played."""
        codes = list(self._pair_codes(learner_id, opponent_id))
        codes += [-c for c in self._pair_codes(opponent_id, learner_id)]
        return _score(codes)

    def draw_rate(self, learner_id: str, opponent_id: str) -> float | None:
        """Share of draws among the games `win_prob` reads; None if never played. With it a
        window's score splits into wins (score - draws / 2) and draws."""
        codes = [
            *self._pair_codes(learner_id, opponent_id),
            *self._pair_codes(opponent_id, learner_id),
        ]
        return None if not codes else codes.count(0) / len(codes)

    def _pair_codes(self, a: str, b: str) -> deque[int]:
        record = self._pairs.get(a, {}).get(b)
        return record.recent if record is not None else deque()

    def totals(self, member_id: str, opponent_id: str) -> tuple[int, int, int]:
        """All-time (wins, draws, losses) of `member_id` against `opponent_id`, either seating."""
        ab = self._pairs.get(member_id, {}).get(opponent_id, PairRecord())
        ba = self._pairs.get(opponent_id, {}).get(member_id, PairRecord())
        return ab.wins + ba.losses, ab.draws + ba.draws, ab.losses + ba.wins

    def forget(self, member_id: str) -> None:
        """Drop every record involving a member (after eviction)."""
        self._learner.pop(member_id, None)
        self._pairs.pop(member_id, None)
        for opponents in self._pairs.values():
            opponents.pop(member_id, None)

    def to_dict(self) -> dict[str, Any]:
        pairs = {
            learner: {
                opp: {
                    "wins": r.wins,
                    "draws": r.draws,
                    "losses": r.losses,
                    "recent": list(r.recent),
                }
                for opp, r in opponents.items()
            }
            for learner, opponents in self._pairs.items()
        }
        learners = {learner: list(codes) for learner, codes in self._learner.items()}
        return {"window": self.window, "learners": learners, "pairs": pairs}

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, window: int) -> "ResultBook":
        """Restore; `window` (from the current spec) wins over the saved one, keeping the tail."""
        book = cls(window=window)
        for learner, codes in data.get("learners", {}).items():
            book._learner[learner] = deque(codes, maxlen=window)
        for learner, opponents in data.get("pairs", {}).items():
            for opp, r in opponents.items():
                book._pairs.setdefault(learner, {})[opp] = PairRecord(
                    wins=r["wins"],
                    draws=r["draws"],
                    losses=r["losses"],
                    recent=deque(r["recent"], maxlen=window),
                )
        return book
