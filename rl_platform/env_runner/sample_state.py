"""`SampleState`: what the array runner's game loop plays from and advances, from one reset of
every game (`VectorEnvRunner._reset_all`) to the next. The runner holds one (None until the
first reset, and again when the games must start anew) and passes it to every game-loop
function (env_runner/game_loop.py), which is all the state those functions read or write
besides the runner's game, modules and acting buffers."""

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.env_runner.bc_rows import BCRows
from rl_platform.sampling.game_stats import GameStats
from rl_platform.sampling.model_inputs import ModelInputs
from rl_platform.sampling.rollout import Carry
from rl_platform.sampling.seat_plan import SeatPlan
from rl_platform.sampling.seat_states import SeatStates


@dataclass
class SampleState:
    obs: Any
    """The game's observations of every seat `[N, P, ...]` (scripted agents and BC read them)."""
    acting: np.ndarray
    """`[N, P]` the seats that act at the next step."""
    inputs: ModelInputs
    """How observations become model inputs (the opponent's history, hidden features)."""
    model_obs: Any
    """The model inputs of every seat for the next step."""
    module_ids: tuple[str, ...]
    """The runner's modules, in the order `SeatPlan.module_of` indexes."""
    main: str
    """The trained module whose state layout every module shares."""
    trained: Collection[str]
    """Modules whose decisions are recorded for a learner."""
    states: SeatStates | None
    """Every seat's recurrent state on the acting device; None for stateless modules."""
    seats: SeatPlan
    """Which module plays each seat of each game, drawn from the league's plan at a reset."""
    uids: np.ndarray
    """`[N]` the episode id of each game's current game."""
    next_uid: int
    """The id the next game to start gets."""
    seat_t: np.ndarray
    """`[N, P]` each seat's step count in its current game (episodes' time indices)."""
    stats: GameStats
    """Returns, lengths and results of games in progress, logged when they end."""
    bc: BCRows | None
    """BC's labelling of the cloned module's rows; None without `bc:`."""
    tag: str
    """This reset's prefix of episode ids (unique across resets and runners)."""
    carry: Carry | None = None
    """The open transitions a turn-based game carries into the next sample call."""
