"""The vectorized game protocol: N games x P seats advanced by one numpy call (no Ray).

A game that implements `VectorGame` trains on rl_platform's array env runner
(`env.runner: vector`, docs/vector_games.md): one `step` moves all N games, one forward pass
per module acts for all seats that module plays, and no per-game Python object is built
while sampling. Everything here is plain numpy so a game can be written and tested alone.

Shapes (N games, P seats, A actions):

* observations: an array `[N, P, ...]` or a dict of such arrays (RLlib's action-masking
  convention `{"observations": [N, P, D], "action_mask": [N, P, A]}`); one seat's slice is
  an element of `observation_space`;
* `actions [N, P]` int64; entries of seats that do not act this step are ignored;
* `rewards [N, P]` float32 and each reward component `[N, P]`;
* `terminated`, `truncated [N]` bool;
* `winner [N]` int8: `RUNNING` while a game goes on, else the winning seat or `DRAW`;
* `acting [N, P]` bool: the seats that act on the next step (all True in simultaneous
  games; one seat per game in turn-based ones).

Auto-reset: a game that ends inside `step` restarts at once. The returned observations and
`acting` rows of such games belong to the new game; `final_obs` holds the last observation
of the finished game (same structure, rows of games that did not end are unspecified).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

RUNNING = -1
"""`winner` of a game still running."""
DRAW = -2
"""`winner` of a game that ended without a winner."""

Observations = np.ndarray | Mapping[str, np.ndarray]


@dataclass
class VectorReset:
    """What `reset` returns: first observations and who acts first."""

    obs: Observations
    acting: np.ndarray


@dataclass
class VectorStep:
    """What `step` returns (see the module docstring for shapes)."""

    obs: Observations
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    winner: np.ndarray
    acting: np.ndarray
    components: Mapping[str, np.ndarray]
    final_obs: Observations | None = None
    """Last observations of games that ended this step (None when none ended)."""

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated


@runtime_checkable
class VectorGame(Protocol):
    """N games x P seats stepped together; see the module docstring."""

    num_games: int
    num_seats: int
    observation_space: gym.Space
    """One seat's observation space (the same for every seat)."""
    action_space: gym.spaces.Discrete
    """One seat's action space."""
    reward_components: tuple[str, ...]
    """Names of the components `step` reports (may be empty)."""
    turn_based: bool
    """True if only some seats act each step (`acting`)."""

    def reset(self, seed: int | None = None) -> VectorReset: ...

    def step(self, actions: np.ndarray) -> VectorStep: ...


def take_rows(obs: Observations, index: Any) -> Observations:
    """`obs[index]` for an array or every array of a dict (e.g. `(games, seats)` pairs)."""
    if isinstance(obs, Mapping):
        return {key: value[index] for key, value in obs.items()}
    return obs[index]


def put_rows(target: Observations, index: Any, source: Observations) -> None:
    """`target[index] = source`, for arrays or dicts of arrays with the same keys."""
    if isinstance(target, Mapping):
        for key, value in target.items():
            value[index] = source[key]
    else:
        target[index] = source


def outcome_for_seat(winner: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """+1 win, 0 draw, -1 loss for `seat` in finished games (`winner` not RUNNING)."""
    won = winner == seat
    lost = (winner != seat) & (winner != DRAW) & (winner != RUNNING)
    return won.astype(np.int8) - lost.astype(np.int8)
