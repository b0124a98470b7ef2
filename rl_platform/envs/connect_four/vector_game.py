"""Connect four as a `VectorGame` (rl_platform/envs/vector_game.py): N boards in numpy arrays.

It reproduces what an agent sees through `pettingzoo/connect_four_v3` (PettingZoo's
`connect_four_v3` in our MaskedPettingZooEnv, rl_platform/env_adapters/pettingzoo_adapter.py), so a
policy trained on one plays the other: seat p is PettingZoo's `player_p`, seat 0 moves first
in every game, and one seat's observation is `{"observations": float32 [84], "action_mask":
float32 [7]}` = the [6, 7, 2] board flattened, row 0 at the top, channel 0 the observing
seat's pieces, channel 1 the opponent's.

Masks, as PettingZoo's `observe`: the seat to move gets the legal columns, the seat waiting
gets its view of the board with an all-zero mask (the runner only reads acting seats). In
`final_obs` both seats get the legal columns of the final board, as RLlib's PettingZooEnv
hands both agents their last observation while each is the selected agent.

Rewards as PettingZoo: +1 / -1 to winner / loser, 0 on a draw (full board) and during play.
An illegal move (a full column) ends the game as PettingZoo's `TerminateIllegalWrapper`
does: the board is left as it was, the mover gets -1 and the other seat 0; `winner` is the
other seat. Differences: PettingZoo also marks such a game truncated (here only
`terminated`), and it warns instead of raising. An action outside 0..6 raises ValueError
where PettingZoo's `AssertOutOfBoundsWrapper` asserts.

Connect four has no chance: `seed` is accepted for the protocol and changes nothing.
"""

import gymnasium as gym
import numpy as np

from rl_platform.base.observation_keys import ACTION_MASK_KEY, MASKED_OBS_KEY
from rl_platform.envs.connect_four.board import COLS, LINES, ROWS
from rl_platform.envs.vector_game import DRAW, RUNNING, VectorReset, VectorStep

OBS_KEY = MASKED_OBS_KEY
MASK_KEY = ACTION_MASK_KEY
NUM_SEATS = 2
CELLS = ROWS * COLS
# For seat s: (own plane, opponent plane) as indices into the seat axis of `pieces`.
_VIEW = np.array([[0, 1], [1, 0]])


def observation_space() -> gym.spaces.Dict:
    """One seat's space; equals `masked_space` of PettingZoo connect four's space."""
    return gym.spaces.Dict(
        {
            OBS_KEY: gym.spaces.Box(0.0, 1.0, (CELLS * 2,), np.float32),
            MASK_KEY: gym.spaces.Box(0.0, 1.0, (COLS,), np.float32),
        }
    )


class ConnectFourVectorGame:
    """`num_games` connect-four games, turn-based, two seats; see the module docstring."""

    num_seats = NUM_SEATS
    turn_based = True
    reward_components = ("win_loss",)

    def __init__(self, num_games: int, seed: int | None = None) -> None:
        self.num_games = num_games
        self.seed = seed
        self.observation_space = observation_space()
        self.action_space = gym.spaces.Discrete(COLS)
        # pieces[g, s, r * COLS + c]: seat s has a piece on row r (0 = top), column c.
        self.pieces = np.zeros((num_games, NUM_SEATS, CELLS), bool)
        self.filled = np.zeros((num_games, COLS), np.int64)  # pieces per column
        self.to_move = np.zeros(num_games, np.int64)  # seat whose turn it is
        self._games = np.arange(num_games)

    def reset(self, seed: int | None = None) -> VectorReset:
        self._clear(np.ones(self.num_games, bool))
        return VectorReset(obs=self._observe(final=False), acting=self._acting())

    def step(self, actions: np.ndarray) -> VectorStep:
        column = self._mover_actions(actions)
        games, mover = self._games, self.to_move
        illegal = self.filled[games, column] >= ROWS
        legal_games = games[~illegal]
        self._drop(legal_games, mover[legal_games], column[legal_games])
        won = ~illegal & self._has_four(mover)
        drawn = ~won & ~illegal & (self.filled.sum(axis=1) == CELLS)
        terminated = won | drawn | illegal

        rewards = np.zeros((self.num_games, NUM_SEATS), np.float32)
        rewards[games, mover] = np.where(won, 1.0, np.where(illegal, -1.0, 0.0))
        rewards[games, 1 - mover] = np.where(won, -1.0, 0.0)
        winner = np.full(self.num_games, RUNNING, np.int8)
        winner[won] = mover[won]
        winner[illegal] = 1 - mover[illegal]
        winner[drawn] = DRAW

        final_obs = self._observe(final=True) if terminated.any() else None
        self.to_move = 1 - mover
        self._clear(terminated)
        return VectorStep(
            obs=self._observe(final=False),
            rewards=rewards,
            terminated=terminated,
            truncated=np.zeros(self.num_games, bool),
            winner=winner,
            acting=self._acting(),
            components={"win_loss": rewards.copy()},
            final_obs=final_obs,
        )

    def legal_columns(self) -> np.ndarray:
        """[N, 7] bool: columns that are not full."""
        return self.filled < ROWS

    def _mover_actions(self, actions: np.ndarray) -> np.ndarray:
        """Column chosen by the seat to move in each game; the other seat's entry is ignored."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_games, NUM_SEATS):
            raise ValueError(
                f"actions must have shape {(self.num_games, NUM_SEATS)}, got {actions.shape}"
            )
        column = actions[self._games, self.to_move].astype(np.int64)
        bad = (column < 0) | (column >= COLS)
        if bad.any():
            raise ValueError(f"connect four columns are 0..{COLS - 1}, got {column[bad][:5]}")
        return column

    def _drop(self, games: np.ndarray, seats: np.ndarray, columns: np.ndarray) -> None:
        """Drop one piece per game into a non-full column: it lands on the lowest empty row."""
        rows = ROWS - 1 - self.filled[games, columns]
        self.pieces[games, seats, rows * COLS + columns] = True
        self.filled[games, columns] += 1

    def _has_four(self, seats: np.ndarray) -> np.ndarray:
        """[N] bool: the given seat of each game has four in a row anywhere on its board."""
        own = self.pieces[self._games, seats]  # [N, 42]
        return own[:, LINES].all(axis=-1).any(axis=-1)

    def _clear(self, games: np.ndarray) -> None:
        """Start new games where `games` is True: empty board, seat 0 to move."""
        self.pieces[games] = False
        self.filled[games] = 0
        self.to_move[games] = 0

    def _acting(self) -> np.ndarray:
        return self.to_move[:, None] == np.arange(NUM_SEATS)[None, :]

    def _observe(self, *, final: bool) -> dict[str, np.ndarray]:
        """Both seats' observations [N, 2, ...]; `final` gives both seats the legal mask."""
        # [N, seat, channel, 42] -> [N, seat, 42, channel]: PettingZoo's [6, 7, 2] flattened.
        planes = self.pieces[:, _VIEW].transpose(0, 1, 3, 2)
        board = planes.reshape(self.num_games, NUM_SEATS, CELLS * 2).astype(np.float32)
        seats = np.ones((self.num_games, NUM_SEATS), bool) if final else self._acting()
        mask = self.legal_columns()[:, None, :] & seats[:, :, None]
        return {OBS_KEY: board, MASK_KEY: mask.astype(np.float32)}
