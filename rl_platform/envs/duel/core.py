"""`DuelCore`: N duel games advanced together by one vectorized `step(actions[N, 2])`.

Frame order: counters tick -> inputs -> shields -> movement and collisions -> hits ->
knockouts -> game end and rewards -> observations. No Python loop runs over games.

Finished games: with `auto_reset=True` they restart inside the same `step` (the returned
observation is the new game's first one, the last one is in `DuelStep.final_obs`). Without it
they stay frozen at their final state (zero reward, done flags kept) until `reset()`.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.envs.duel import combat, physics
from rl_platform.envs.duel.actions import MIRROR_ACTION, NUM_ACTIONS
from rl_platform.envs.duel.config import REWARD_COMPONENTS, DuelConfig, make_config
from rl_platform.envs.duel.observation import OBS_SIZE, write_observations
from rl_platform.envs.duel.rules import BLAST_X, HP_MAX, ZONE_END_X
from rl_platform.envs.duel.state import DuelState, reset_games

DRAW = 2
_ALL = slice(None)


@dataclass
class DuelStep:
    """Outputs of one `DuelCore.step`; per-player arrays have shape (N, 2)."""

    obs: np.ndarray
    """(N, 2, 64) float32 egocentric observations."""
    rewards: np.ndarray
    """(N, 2) float32 weighted sum of `components`."""
    terminated: np.ndarray
    """(N,) the game is over: a player ran out of stocks, or time ran out (unless
    `truncate_on_timeout`, then time-outs are reported in `truncated` instead)."""
    truncated: np.ndarray
    """(N,) time ran out and the config asks for truncation; all False by default."""
    components: dict[str, np.ndarray]
    """Unweighted reward components, each (N, 2) float32."""
    winner: np.ndarray
    """(N,) int8: -1 still running, 0 or 1 the winning player, 2 a draw."""
    timed_out: np.ndarray
    """(N,) the game ended on time; the winner was decided by stocks, then HP."""
    final_obs: np.ndarray | None = None
    """With auto_reset: a copy of the observations before games were reset (rows of games
    that ended this step are their final observations); None when no game ended."""


class DuelCore:
    """Vectorized duel games; `actions[i, p]` is player p's egocentric action in game i."""

    def __init__(self, num_games: int = 1, *, auto_reset: bool = False, **kwargs: Any) -> None:
        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, got {num_games}")
        self.config: DuelConfig = make_config(**kwargs)
        self.num_games = num_games
        self.auto_reset = auto_reset
        self.state = DuelState.allocate(num_games)
        self._rng = np.random.default_rng(self.config.seed)
        # A stream of its own, so that the private draws leave spawn positions as they were.
        self._draw_rng = np.random.default_rng(_draw_seed(self.config.seed))
        self._weights = np.array(
            [self.config.weight(name) for name in REWARD_COMPONENTS], dtype=np.float32
        )
        self._player_ids = np.arange(2, dtype=np.int8)
        self._timed_out = np.zeros(num_games, bool)
        self.reset()

    def reset(self, seed: int | None = None) -> np.ndarray:
        """Start fresh games everywhere; returns observations (N, 2, 64)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self._draw_rng = np.random.default_rng(_draw_seed(seed))
        self._reset_rows(np.ones(self.num_games, bool))
        return self.observe()

    def observe(self) -> np.ndarray:
        obs = np.empty((self.num_games, 2, OBS_SIZE), np.float32)
        self._write_obs(obs, _ALL)
        return obs

    def step(self, actions: np.ndarray) -> DuelStep:
        """Advance every game by one frame; `actions` is an int array (N, 2) of `Action`s."""
        s = self.state
        world = self._world_actions(actions)
        frozen = None if self.auto_reset or not s.done.any() else np.flatnonzero(s.done)
        saved = s.take(frozen) if frozen is not None else None

        physics.begin_frame(s, world)
        move = physics.apply_inputs(s, world)
        combat.update_shields(s)
        physics.move_bodies(s, move)
        damage = combat.resolve_hits(s)
        ko = combat.knockouts(s, self.zone_x())
        s.t += 1
        ended = self._finish_games(ko)
        components = self._components(damage, ko, ended)

        if saved is not None:
            s.put(frozen, saved)
            for values in components.values():
                values[frozen] = 0.0
        timed_out = s.done & self._timed_out
        truncated = timed_out if self.config.truncate_on_timeout else np.zeros_like(timed_out)
        result = DuelStep(
            obs=self.observe(),
            rewards=self._weighted(components),
            terminated=s.done & ~truncated,
            truncated=truncated,
            components=components,
            winner=s.winner.copy(),
            timed_out=timed_out,
        )
        if self.auto_reset and ended.any():
            result.final_obs = result.obs.copy()
            self._reset_rows(ended)
            self._write_obs(result.obs, np.flatnonzero(ended))
        return result

    def zone_x(self) -> np.ndarray | float:
        """The side blast line of each game (N, 1) at its current frame, or the fixed one."""
        cfg = self.config
        start = cfg.zone_closes_at * cfg.max_steps
        if start >= cfg.max_steps:
            return BLAST_X
        closed = np.clip((self.state.t - start) / (cfg.max_steps - start), 0.0, 1.0)
        return (BLAST_X - (BLAST_X - ZONE_END_X) * closed)[:, None].astype(np.float32)

    def _world_actions(self, actions: np.ndarray) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (self.num_games, 2):
            raise ValueError(f"actions must have shape ({self.num_games}, 2), got {actions.shape}")
        if actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {actions.dtype}")
        if actions.min() < 0 or actions.max() >= NUM_ACTIONS:
            raise ValueError(f"actions must be in [0, {NUM_ACTIONS - 1}]")
        world = actions.astype(np.int64)
        world[:, 1] = MIRROR_ACTION[world[:, 1]]
        return world

    def _finish_games(self, ko: np.ndarray) -> np.ndarray:
        """Mark games that end this step and decide their winner; returns the mask (N,)."""
        s = self.state
        out = s.stocks <= 0
        by_ko = out.any(axis=1) & ~s.done
        timed_out = ~by_ko & ~s.done & (s.t >= self.config.max_steps)
        ended = by_ko | timed_out
        self._timed_out = timed_out | (s.done & self._timed_out)
        if not ended.any():
            return ended
        # Compare (stocks, HP) lexicographically; a KO'd-out player has 0 stocks.
        lead = (s.stocks[:, 0] - s.stocks[:, 1]) * 1000.0 + (s.hp[:, 0] - s.hp[:, 1])
        winner = np.where(lead > 0, 0, np.where(lead < 0, 1, DRAW)).astype(np.int8)
        np.copyto(s.winner, winner, where=ended)
        s.done |= ended
        return ended

    def _components(
        self, damage: np.ndarray, ko: np.ndarray, ended: np.ndarray
    ) -> dict[str, np.ndarray]:
        s = self.state
        won = (s.winner[:, None] == self._player_ids) & ended[:, None]
        lost = (s.winner[:, None] == 1 - self._player_ids) & ended[:, None]
        if self.config.draw_is_loss:
            lost |= (s.winner[:, None] == DRAW) & ended[:, None]
        win_loss = won.astype(np.float32) - lost
        ko_f = ko.astype(np.float32)
        return {
            "damage_dealt": damage[:, ::-1] / np.float32(HP_MAX),
            "damage_taken": (0.0 - damage) / np.float32(HP_MAX),
            "knockout": ko_f[:, ::-1] - ko_f,
            "win_loss": win_loss,
            "time_penalty": np.full(damage.shape, -1.0, np.float32),
        }

    def _weighted(self, components: dict[str, np.ndarray]) -> np.ndarray:
        total = np.zeros((self.num_games, 2), np.float32)
        for weight, name in zip(self._weights, REWARD_COMPONENTS, strict=True):
            if weight:
                total += weight * components[name]
        return total

    def _reset_rows(self, rows: np.ndarray) -> None:
        cfg = self.config
        reset_games(self.state, rows, stocks=cfg.stocks, jitter=cfg.spawn_jitter, rng=self._rng)
        self.state.draw[rows] = self._draw_rng.random((int(rows.sum()), 2), np.float32)
        self._timed_out[rows] = False

    def _write_obs(self, out: np.ndarray, rows: slice | np.ndarray) -> None:
        write_observations(
            self.state, out, stocks=self.config.stocks, max_steps=self.config.max_steps, rows=rows
        )


def _draw_seed(seed: int | None) -> list[int] | None:
    return None if seed is None else [seed, 1]
