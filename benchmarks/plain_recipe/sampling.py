"""The games stepped for one iteration: main in seat 0, seat 1 as `OpponentPool` draws it."""

import numpy as np
import torch
from torch import nn

from benchmarks.plain_recipe.acting import CapturedActing, EagerActing
from benchmarks.plain_recipe.config import MAIN_SEAT, OPPONENT_SEAT, RecipeConfig
from benchmarks.plain_recipe.opponents import OpponentPool
from benchmarks.plain_recipe.rollout import Rollout
from rl_platform.envs.duel.vector_game import DuelVectorGame
from rl_platform.envs.vector_game import VectorStep


class RecipeSampler:
    """Steps `num_games` duels on the host; the networks act through `acting`."""

    def __init__(
        self, config: RecipeConfig, *, opponents: OpponentPool, acting: EagerActing | CapturedActing
    ) -> None:
        self.config, self.opponents, self.acting = config, opponents, acting
        self.game = DuelVectorGame(config.num_games, seed=config.seed, **config.duel_settings)
        self.obs = self.game.reset(seed=config.seed).obs
        self.actions = np.zeros((config.num_games, self.game.num_seats), np.int64)

    @torch.no_grad()
    def collect(self, main: nn.Module, rollout: Rollout) -> None:
        for key, value in self.acting.main_state.items():
            rollout.state0[key].copy_(value)
        rollout.truncated_obs.clear()
        for t in range(self.config.rollout):
            groups = self.opponents.network_groups()
            self.acting.queue(main, self.obs, groups, rollout, t)
            # The scripted agents run on the host while the networks' forwards are queued.
            opponent = self.actions[:, OPPONENT_SEAT]
            self.opponents.scripted_actions(self.obs[:, OPPONENT_SEAT], out=opponent)
            main_actions, group_actions = self.acting.actions()
            for (_, _, games), actions in zip(groups, group_actions, strict=True):
                opponent[games] = actions
            self.actions[:, MAIN_SEAT] = main_actions
            step = self.game.step(self.actions)
            self._record(rollout, t, step)
            self.obs = step.obs
        rollout.obs[-1].copy_(torch.from_numpy(self.obs[:, MAIN_SEAT]))

    def _record(self, rollout: Rollout, t: int, step: VectorStep) -> None:
        rollout.rewards[t] = step.rewards[:, MAIN_SEAT]
        rollout.terminated[t], rollout.truncated[t] = step.terminated, step.truncated
        if not step.done.any():
            return
        if step.truncated.any():
            cut = np.flatnonzero(step.truncated)
            rollout.truncated_obs.append((t, cut, step.final_obs[cut, MAIN_SEAT].copy()))
        ended = np.flatnonzero(step.done)
        self.opponents.finish(ended, step.winner[ended] == MAIN_SEAT)
        self.acting.restart(ended)
