"""The array runner's game loop: play steps of every game into rollout arrays (no Ray).

`GameLoop` is the part of `VectorEnvRunner` (env_runner/vector_env_runner.py) that plays:
per step, one forward pass per module over the seats it plays (scripted seats with numpy),
BC labels for the cloned module's rows, one `game.step`, and whole-row writes of the trained
seats' decisions, rewards and game ends into `RolloutArrays`; games that end are scored and
their seats drawn again from the league's plan. Every method takes the `SampleState` it
plays from and advances (env_runner/sample_state.py); besides it, the loop reads only the
runner attributes `GameLoop` declares (the game, the modules, the acting buffers), which
`VectorEnvRunner` sets up with RLlib's API around them.
"""

from typing import Any

import numpy as np
import torch

from rl_platform.env_runner import module_actions
from rl_platform.env_runner.device_acting import SeatActing
from rl_platform.env_runner.sample_state import SampleState
from rl_platform.envs.vector_game import VectorGame, put_rows, take_rows
from rl_platform.sampling.game_stats import log_sample_counts
from rl_platform.sampling.rollout import RolloutArrays, carry_into, record_opponent_actions
from rl_platform.sampling.seat_states import ChunkPositions, flat_rows


class GameLoop:
    """Playing steps into rollout arrays (module docstring); mixed into `VectorEnvRunner`."""

    game: VectorGame
    module: Any
    """RLlib's MultiRLModule of the runner (torch modules and scripted agents)."""
    num_envs: int
    agent_ids: tuple[str, ...]
    num_env_steps_sampled_lifetime: int
    _seat_acting: SeatActing | None
    _positions: ChunkPositions
    """Recurrent modules: which seats' states the learner reads (per sample call)."""

    def _play(
        self,
        state: SampleState,
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
            steps=steps, obs=state.model_obs, num_games=self.game.num_games
        )
        carry_into(arrays, state.carry)
        if state.states is not None and sequence_starts is None:
            arrays.state_stride = self._positions.max_seq_len
            self._positions.start_call(state.carry.seats if state.carry is not None else None)
        arrays.episode_uid[0] = state.uids
        trained_actions: list[tuple[str, np.ndarray]] = []
        moves = np.zeros(self.game.num_seats, np.int64)
        label_opponents = explore and self._infers_opponent_actions()
        seq_len = self._seq_len(state) if sequence_starts is not None else 0
        for row in range(1, steps + 1):
            if seq_len and (row - 1) % seq_len == 0:
                sequence_starts.append(state.states.snapshot())
            moves += state.acting.sum(axis=0)
            actions = self._act(
                state, arrays, row, explore=explore, trained_actions=trained_actions
            )
            if label_opponents:
                record_opponent_actions(arrays, row, actions, state.acting)
            self._advance(state, arrays, row, actions, logger)
        self._log_counts(steps, moves, trained_actions, logger)
        return arrays

    def _infers_opponent_actions(self) -> bool:
        """Whether `main` learns to infer the opponent's actions (`model.opponent_action`)."""
        return self.game.num_seats == 2 and self._settings().opponent_actions

    def _act(
        self,
        state: SampleState,
        arrays: RolloutArrays,
        row: int,
        *,
        explore: bool,
        trained_actions: list,
    ) -> np.ndarray:
        """Actions [N, P] of every acting seat; records the trained seats' decisions."""
        actions = np.zeros(state.acting.shape, np.int64)
        module_of = state.seats.module_of
        arrays.episode_uid[row] = state.uids
        self._seat_acting.load(state.model_obs)
        for index in np.unique(module_of[state.acting]).tolist():
            games, seats = np.nonzero(state.acting & (module_of == index))
            module_id = state.module_ids[index]
            output, obs = self._forward(state, module_id, games, seats, explore=explore)
            if module_id not in state.trained:
                actions[games, seats] = output.actions
                continue
            if state.bc is not None and module_id == state.bc.module_id and explore:
                raw = take_rows(state.obs, (games, seats))
                state.bc.label(arrays, row, games, seats, raw, output, uids=state.uids)
            actions[games, seats] = output.actions
            self._record(state, arrays, row, (games, seats), index, obs, output, explore=explore)
            trained_actions.append((module_id, output.actions))
        return actions

    def _forward(
        self,
        state: SampleState,
        module_id: str,
        games: np.ndarray,
        seats: np.ndarray,
        *,
        explore: bool,
    ) -> tuple[module_actions.PolicyOutput, Any]:
        """One forward pass of `module_id` over its seats; returns (output, model inputs)."""
        module = self.module[module_id]
        if not isinstance(module, torch.nn.Module):  # scripted agents read raw observations
            obs = take_rows(state.obs, (games, seats))
            return module_actions.act(module, obs), obs
        obs = take_rows(state.model_obs, (games, seats))
        rows = flat_rows(games, seats, num_seats=self.game.num_seats)
        return self._seat_acting.act(module_id, rows, explore=explore), obs

    def _record(
        self,
        state: SampleState,
        arrays: RolloutArrays,
        row: int,
        where: tuple[np.ndarray, np.ndarray],
        index: int,
        obs: Any,
        output: module_actions.PolicyOutput,
        *,
        explore: bool,
    ) -> None:
        """Write the decisions of module `index` at `where` (games, seats) into `arrays`."""
        games, seats = where
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
                state.states, row, games, seats, keep_in=keep_in, keep_out=keep_out
            )

    def _advance(
        self, state: SampleState, arrays: RolloutArrays, row: int, actions: np.ndarray, logger: Any
    ) -> None:
        out = self.game.step(actions)
        arrays.rewards[row] = out.rewards
        state.stats.add_step(out.rewards, out.components)
        done = out.done
        state.model_obs, model_final = state.inputs.advance(
            out.obs, out.acting, done, out.final_obs
        )
        if done.any():
            ended = np.flatnonzero(done)
            arrays.ended[row, ended] = True
            arrays.terminated[row, ended] = out.terminated[ended]
            arrays.truncated[row, ended] = out.truncated[ended]
            put_rows(arrays.final_obs, (row, ended), take_rows(model_final, ended))
            if state.states is not None:
                state.states.restart(ended)
                self._positions.end_games(ended)
            results = state.stats.finish(
                ended,
                winner=out.winner,
                seats=state.seats,
                trained=state.trained,
                logger=logger,
            )
            if state.bc is not None:
                state.bc.log_results(results, logger)
            state.seats.draw(ended, self._plan(), main=state.main)
            state.uids[ended] = np.arange(state.next_uid, state.next_uid + len(ended))
            state.next_uid += len(ended)
        state.obs, state.acting = out.obs, out.acting

    def _log_counts(
        self,
        steps: int,
        moves: np.ndarray,
        trained_actions: list[tuple[str, np.ndarray]],
        logger: Any,
    ) -> None:
        env_steps = steps * self.num_envs
        self.num_env_steps_sampled_lifetime += env_steps
        log_sample_counts(
            logger,
            env_steps=env_steps,
            moves=dict(zip(self.agent_ids, moves.tolist(), strict=True)),
            trained_actions=trained_actions,
            num_actions=int(self.game.action_space.n),
        )
