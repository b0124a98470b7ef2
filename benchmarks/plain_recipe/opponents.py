"""Seat 1 of each game: the recipe's `league.opponent_mix` by env steps, as `rlp train` plays it.

Each game draws its opponent class at its reset from the mix in effect: the product's schedule
(`LeagueSpec.mix_at`, rl_platform/spec/mix_schedule.py: phases `{from_env_steps, mix}`
blended by `mix_interpolation`), read before each iteration at the env steps trained so far,
as the league sets its matchmaker's mix between iterations. The classes:

* a scripted agent (`based`, `constant`, or what `league.scripted` maps a name to): the
  product's own agent from its registry (`rl_platform.teachers.scripted_act`), numpy on the
  host;
* `self_play`: one of the frozen snapshots of main, drawn uniformly. Main is frozen every
  `snapshot_every` env steps into a ring of `league.slots` networks (the newest replaces the
  oldest, in place); until the first freeze `self_play` games mirror the live main, as the
  league's matchmaker does when nothing is frozen yet.
"""

import copy

import numpy as np
from torch import nn

from benchmarks.plain_recipe.config import RecipeConfig
from rl_platform.spec.league import SELF_PLAY
from rl_platform.teachers import DUEL_ENV, ActFn, scripted_act

OpponentGroup = tuple[int, nn.Module, np.ndarray]
"""(snapshot slot, the network playing it, the games it plays this frame)."""


class OpponentPool:
    """Who plays seat 1 of each game, and main's results against each opponent class."""

    def __init__(self, config: RecipeConfig, *, main: nn.Module, rng: np.random.Generator) -> None:
        league = config.league
        self.league, self.main, self.rng = league, main, rng
        self.classes = league.mix_keys
        """Opponent classes: the mix's keys in first-seen order (`self_play` among them)."""
        self.scripted: dict[int, ActFn] = {
            index: scripted_act(env_id=DUEL_ENV, agent=league.scripted_agents.get(key, key))
            for index, key in enumerate(self.classes)
            if key != SELF_PLAY
        }
        # A deep copy leaves the LSTM's weights in separate chunks, which cuDNN would compact
        # on every call (a UserWarning per forward); `.to` packs them again.
        self.snapshots = [
            copy.deepcopy(main).to(config.device).requires_grad_(False) for _ in range(league.slots)
        ]
        self.frozen = 0
        """Freezes so far; the ring holds min(frozen, slots) snapshots."""
        self.mix = league.mix_at(0)
        self.kind = np.zeros(config.num_games, np.int64)
        """Each game's opponent class (an index into `classes`)."""
        self.slot = np.zeros(config.num_games, np.int64)
        """Each `self_play` game's snapshot slot."""
        self.games = np.zeros(len(self.classes), np.int64)
        """Finished games by opponent class; `wins` likewise."""
        self.wins = np.zeros(len(self.classes), np.int64)
        self.draw(np.arange(config.num_games))

    @property
    def slots(self) -> int:
        return len(self.snapshots)

    def set_env_steps(self, env_steps: int) -> None:
        """The mix in effect after `env_steps` env steps (for the games that start from now)."""
        self.mix = self.league.mix_at(env_steps)

    def draw(self, games: np.ndarray) -> None:
        """New opponents for `games` (at their reset)."""
        weights = np.array([self.mix.get(key, 0.0) for key in self.classes])
        self.kind[games] = self.rng.choice(len(self.classes), size=games.size, p=weights)
        held = max(1, min(self.frozen, self.slots))
        self.slot[games] = self.rng.integers(held, size=games.size)

    def freeze(self) -> None:
        """Main's current weights into the ring's oldest slot, in place (the addresses stay,
        so a captured acting graph of that slot keeps reading them)."""
        self.snapshots[self.frozen % self.slots].load_state_dict(self.main.state_dict())
        self.frozen += 1

    def network_groups(self) -> list[OpponentGroup]:
        """The snapshot slots in play this frame, with their networks and games."""
        if SELF_PLAY not in self.classes:
            return []
        self_play = self.kind == self.classes.index(SELF_PLAY)
        groups = []
        for slot in range(max(1, min(self.frozen, self.slots))):
            games = np.flatnonzero(self_play & (self.slot == slot))
            if games.size:
                net = self.snapshots[slot] if self.frozen else self.main
                groups.append((slot, net, games))
        return groups

    def scripted_actions(self, obs: np.ndarray, out: np.ndarray) -> None:
        """The scripted agents' actions from seat 1's observations [N, 64] into `out` [N]."""
        for index, agent in self.scripted.items():
            games = np.flatnonzero(self.kind == index)
            if games.size:
                out[games] = agent(obs[games], self.rng)

    def finish(self, games: np.ndarray, main_won: np.ndarray) -> None:
        """Count the results of the `games` that ended, then draw their next opponents."""
        np.add.at(self.games, self.kind[games], 1)
        np.add.at(self.wins, self.kind[games], main_won.astype(np.int64))
        self.draw(games)

    def results(self) -> dict[str, dict[str, int]]:
        return {
            "games": dict(zip(self.classes, self.games.tolist(), strict=True)),
            "wins": dict(zip(self.classes, self.wins.tolist(), strict=True)),
        }
