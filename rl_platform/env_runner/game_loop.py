"""The array runner's game loop: play steps of every game into rollout arrays (no Ray).

`GameLoop` is the part of `VectorEnvRunner` (env_runner/vector_env_runner.py) that plays:
per step, one forward pass per module over the seats it plays (scripted seats with numpy),
BC labels for the cloned module's rows, one `game.step`, and whole-row writes of the trained
seats' decisions, rewards and game ends into `RolloutArrays`; games that end are scored and
their seats drawn again from the league's plan. The runner class holds the state it reads
(games, seats, modules, states: set up by its `_reset_all`) and RLlib's API around it.
"""

from typing import Any

import numpy as np
import torch

from rl_platform.env_runner import module_actions
from rl_platform.envs.vector_game import put_rows, take_rows
from rl_platform.sampling.game_stats import log_sample_counts
from rl_platform.sampling.rollout import RolloutArrays, carry_into, record_opponent_actions
from rl_platform.sampling.seat_states import flat_rows


class GameLoop:
    """Playing steps into rollout arrays (module docstring); mixed into `VectorEnvRunner`."""

    def _play(
        self,
        steps: int,
        logger: Any,
        *,
        explore: bool,
        sequence_starts: list[dict[str, torch.Tensor]] | None = None,
    ) -> RolloutArrays:
        """Play `steps` steps of every game, writing them into new rollout arrays. With
        `sequence_starts` (the array learner), every seat's state before each `max_seq_len`-th
        step is appended to it instead of the chunk states episodes carry."""
        arrays = RolloutArrays.allocate(
            steps=steps, obs=self._model_obs, num_games=self.game.num_games
        )
        carry_into(arrays, self._carry)
        if self._states is not None and sequence_starts is None:
            arrays.state_stride = self._positions.max_seq_len
            self._positions.start_call(self._carry.seats if self._carry is not None else None)
        arrays.episode_uid[0] = self._uids
        trained_actions: list[tuple[str, np.ndarray]] = []
        self._moves = np.zeros(self.game.num_seats, np.int64)
        label_opponents = explore and self._infers_opponent_actions()
        seq_len = self._seq_len() if sequence_starts is not None else 0
        for row in range(1, steps + 1):
            if seq_len and (row - 1) % seq_len == 0:
                sequence_starts.append(self._states.snapshot())
            self._moves += self._acting.sum(axis=0)
            actions = self._act(arrays, row, explore=explore, trained_actions=trained_actions)
            if label_opponents:
                record_opponent_actions(arrays, row, actions, self._acting)
            self._advance(arrays, row, actions, logger)
        self._log_counts(steps, trained_actions, logger)
        return arrays

    def _infers_opponent_actions(self) -> bool:
        """Whether `main` learns to infer the opponent's actions (`model.opponent_action`)."""
        return self.game.num_seats == 2 and self._settings().opponent_actions

    def _act(
        self, arrays: RolloutArrays, row: int, *, explore: bool, trained_actions: list
    ) -> np.ndarray:
        """Actions [N, P] of every acting seat; records the trained seats' decisions."""
        actions = np.zeros(self._acting.shape, np.int64)
        module_of = self._seats.module_of
        arrays.episode_uid[row] = self._uids
        self._seat_acting.load(self._model_obs)
        for index in np.unique(module_of[self._acting]).tolist():
            games, seats = np.nonzero(self._acting & (module_of == index))
            module_id = self._module_ids[index]
            output, obs = self._forward(module_id, games, seats, explore=explore)
            if module_id not in self._trained:
                actions[games, seats] = output.actions
                continue
            if self._bc is not None and module_id == self._bc.module_id and explore:
                raw = take_rows(self._obs, (games, seats))
                self._bc.label(arrays, row, games, seats, raw, output, uids=self._uids)
            actions[games, seats] = output.actions
            self._record(arrays, row, games, seats, index, obs, output, explore=explore)
            trained_actions.append((module_id, output.actions))
        return actions

    def _forward(
        self, module_id: str, games: np.ndarray, seats: np.ndarray, *, explore: bool
    ) -> tuple[module_actions.PolicyOutput, Any]:
        """One forward pass of `module_id` over its seats; returns (output, model inputs)."""
        module = self.module[module_id]
        if not isinstance(module, torch.nn.Module):  # scripted agents read raw observations
            obs = take_rows(self._obs, (games, seats))
            return module_actions.act(module, obs), obs
        obs = take_rows(self._model_obs, (games, seats))
        rows = flat_rows(games, seats, num_seats=self.game.num_seats)
        return self._seat_acting.act(module_id, rows, explore=explore), obs

    def _record(self, arrays, row, games, seats, index, obs, output, *, explore: bool) -> None:
        put_rows(arrays.obs, (row, games, seats), obs)
        arrays.actions[row, games, seats] = output.actions
        arrays.decided[row, games, seats] = True
        arrays.module[row, games, seats] = index
        if explore:
            for name, values in output.extras().items():
                arrays.record_extra(name, row, (games, seats), values)
        if arrays.state_stride:  # trained modules are torch modules of main's layout
            # Only the states the learner reads (`ChunkPositions`) leave the acting device.
            keep_in, keep_out = self._positions.take(games, seats)
            arrays.states.record(
                self._states, row, games, seats, keep_in=keep_in, keep_out=keep_out
            )

    def _advance(self, arrays: RolloutArrays, row: int, actions: np.ndarray, logger: Any) -> None:
        out = self.game.step(actions)
        arrays.rewards[row] = out.rewards
        self._stats.add_step(out.rewards, out.components)
        done = out.done
        self._model_obs, model_final = self._inputs.advance(
            out.obs, out.acting, done, out.final_obs
        )
        if done.any():
            ended = np.flatnonzero(done)
            arrays.ended[row, ended] = True
            arrays.terminated[row, ended] = out.terminated[ended]
            arrays.truncated[row, ended] = out.truncated[ended]
            put_rows(arrays.final_obs, (row, ended), take_rows(model_final, ended))
            if self._states is not None:
                self._states.restart(ended)
                self._positions.end_games(ended)
            results = self._stats.finish(
                ended,
                winner=out.winner,
                seats=self._seats,
                trained=self._trained,
                logger=logger,
            )
            if self._bc is not None:
                self._bc.log_results(results, logger)
            self._seats.draw(ended, self._plan(), main=self._main)
            self._uids[ended] = np.arange(self._next_uid, self._next_uid + len(ended))
            self._next_uid += len(ended)
        self._obs, self._acting = out.obs, out.acting

    def _log_counts(
        self, steps: int, trained_actions: list[tuple[str, np.ndarray]], logger: Any
    ) -> None:
        env_steps = steps * self.num_envs
        self.num_env_steps_sampled_lifetime += env_steps
        log_sample_counts(
            logger,
            env_steps=env_steps,
            moves=dict(zip(self.agent_ids, self._moves.tolist(), strict=True)),
            trained_actions=trained_actions,
            num_actions=int(self.game.action_space.n),
        )
