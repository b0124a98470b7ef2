"""`VectorEnvRunner`: RLlib's multi-agent env runner for games of the `VectorGame` protocol.

Passed to RLlib as `env_runner_cls` (rl_platform/rllib/runner_extension.py binds the settings). It
keeps RLlib's construction, weights, state, metrics logger and connector pipelines, and
replaces the sampling loop (ray/rllib/env/multi_agent_env_runner.py `_sample`), which costs
per-agent Python objects and connector calls on every step. Per step here (the loop itself:
`game_loop.GameLoop`, mixed in):

1. one forward pass per module over all seats it plays (`device_acting.ModuleActing`, on the
   CPU or the GPU, replayed as a CUDA graph there); scripted league agents act on their rows
   with numpy; BC labels and teacher-led actions for the cloned module's rows
   (`bc_rows.BCRows`);
2. one `game.step(actions[N, P])`;
3. whole-row writes into preallocated arrays (`rollout.RolloutArrays`).

At the end of `sample()` the rows of trained seats are cut into trajectories and built into
`SingleAgentEpisode`s in bulk (`episodes.to_episode`), so RLlib's learner connectors and the
PPO/APPO/IMPALA learners run unchanged. Opponents are drawn per game at its reset from the
league's slot plan (`seat_plan.SeatPlan`), results go to the league callback's metric keys.
"""

import math
import uuid
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.utils.metrics import SAMPLE_TIMER

from rl_platform.base.module_ids import trained_module_in
from rl_platform.base.seed_tree import SeedTree
from rl_platform.env_adapters.registry import load_factory
from rl_platform.env_runner import module_actions
from rl_platform.env_runner.bc_rows import BC_COLUMNS, BCRows
from rl_platform.env_runner.device_acting import SeatActing
from rl_platform.env_runner.episodes import cut_episodes
from rl_platform.env_runner.game_loop import GameLoop
from rl_platform.env_runner.sample_state import SampleState
from rl_platform.envs.vector_game import VectorGame
from rl_platform.league import routing
from rl_platform.sampling.game_stats import GameStats
from rl_platform.sampling.model_inputs import model_inputs_for
from rl_platform.sampling.overlap import RolloutInFlight
from rl_platform.sampling.rollout import RolloutArrays
from rl_platform.sampling.rollout_batch import RolloutBatch, rollout_batches
from rl_platform.sampling.runner_settings import VectorRunnerSettings
from rl_platform.sampling.seat_plan import SeatPlan
from rl_platform.sampling.seat_states import ChunkPositions, SeatStates


class VectorEnvRunner(GameLoop, MultiAgentEnvRunner):
    """See the module docstring. Use through `rl_platform.rllib.runner_extension`."""

    settings: ClassVar[VectorRunnerSettings | None] = None

    # ----- construction -------------------------------------------------------------------
    def make_env(self) -> None:
        settings = self._settings()
        kwargs = dict(settings.game_kwargs)
        kwargs.pop("seed", None)
        num_games = int(self.config.num_envs_per_env_runner)
        self.game: VectorGame = load_factory(settings.game_factory)(num_games, **kwargs)
        self.env = None
        self.num_envs = num_games
        self.agent_ids = tuple(getattr(self.game, "agent_ids", None) or self._default_agents())
        obs = {aid: self.game.observation_space for aid in self.agent_ids}
        act = {aid: self.game.action_space for aid in self.agent_ids}
        spaces = (gym.spaces.Dict(obs), gym.spaces.Dict(act))
        self.spaces = {"__env__": spaces, "__env_single__": spaces}
        self._sample_state: SampleState | None = None  # None: every game starts anew first
        self._inflight = RolloutInFlight()

    def make_module(self) -> None:
        """RLlib's modules, moved to `acting_device` (RLlib keeps a local runner's on CPU)."""
        super().make_module()
        device = torch.device(self._settings().acting_device)
        if self.module is not None:
            self.module.foreach_module(
                lambda _id, m: m.to(device) if isinstance(m, torch.nn.Module) else m
            )
        self._seat_acting: SeatActing | None = None

    def _default_agents(self) -> list[str]:
        return [f"player_{p}" for p in range(self.game.num_seats)]

    def _settings(self) -> VectorRunnerSettings:
        if self.settings is None:
            raise RuntimeError(
                "VectorEnvRunner has no settings: add it with "
                "rl_platform.rllib.runner_extension.vector_runner_extension"
            )
        return self.settings

    def get_spaces(self) -> dict[str, Any]:
        if getattr(self, "game", None) is None or not hasattr(self, "_env_to_module"):
            return self.spaces
        mapped = self._env_to_module.observation_space.spaces.items()
        return {
            **self.spaces,
            **{mid: (space, self._env_to_module.action_space[mid]) for mid, space in mapped},
        }

    def assert_healthy(self) -> None:
        assert getattr(self, "game", None) is not None and self.module is not None

    def stop(self) -> None:
        inflight = getattr(self, "_inflight", None)
        if inflight is not None:
            inflight.close()
        close = getattr(getattr(self, "game", None), "close", None)
        if close is not None:
            close()

    def wait_for_rollout(self) -> None:
        """Let a rollout in flight (`resources.overlap`) finish before anything else touches
        the games or the modules; a no-op without one."""
        inflight = getattr(self, "_inflight", None)
        if inflight is not None:
            inflight.wait()

    def restart_acting(self) -> None:
        """Act anew with the modules as they are now (after a module swap,
        rl_platform/env_runner/shared_modules.py): new games, acting prepared again."""
        self.wait_for_rollout()
        self._seat_acting = None
        self._sample_state = None

    def set_state(self, state: Any) -> None:
        self.wait_for_rollout()
        super().set_state(state)

    def get_state(self, *args: Any, **kwargs: Any) -> Any:
        self.wait_for_rollout()
        return super().get_state(*args, **kwargs)

    # ----- sampling -----------------------------------------------------------------------
    def sample(
        self,
        *,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool | None = None,
        random_actions: bool = False,
        force_reset: bool = False,
    ) -> list[Any]:
        if getattr(self, "game", None) is None:
            raise ValueError(f"{self} has no game; it cannot sample")
        explore = self.config.explore if explore is None else explore
        with self.metrics.log_time(SAMPLE_TIMER):
            if num_episodes is not None:
                self.wait_for_rollout()
                return self._sample_games(num_episodes, explore=explore)
            if num_timesteps is None:
                fragment = self.config.get_rollout_fragment_length(self.worker_index)
                num_timesteps = fragment * self.num_envs
            steps = max(1, math.ceil(num_timesteps / self.num_envs))
            if explore and self._settings().overlap and not force_reset:
                return self._overlapped(steps)
            self.wait_for_rollout()
            if force_reset or self._sample_state is None:
                self._reset_all()
            return self._training_sample(steps, self.metrics, explore=explore)

    def _overlapped(self, steps: int) -> list[Any]:
        """The rollout played while the learner worked (or one played now, the first time);
        the next one starts on the worker thread before this returns."""
        ready = self._inflight.take(self.metrics)
        if ready is None:
            if self._sample_state is None:
                self._reset_all()
            ready = self._training_sample(steps, self.metrics, explore=True)
        self._inflight.start(lambda log: self._training_sample(steps, log, explore=True))
        return ready

    def _training_sample(self, steps: int, logger: Any, *, explore: bool) -> list[Any]:
        """`steps` steps of every game for the learner: rollout batches for the array
        learner, else episodes; metrics go to `logger`."""
        state = self._state()
        if explore and self._settings().array_learner:
            return self._rollout_batches(state, steps, logger)
        return self._rollout(state, steps, logger, explore=explore)

    def _state(self) -> SampleState:
        if self._sample_state is None:
            raise RuntimeError("the array runner sampled before its games were reset")
        return self._sample_state

    def _sample_games(self, num_games: int, *, explore: bool) -> list[Any]:
        """Complete games only: reset everything, play until `num_games` have ended."""
        state = self._reset_all()
        finished: list[Any] = []
        done = 0
        while done < num_games:
            steps = max(1, self._steps_hint())
            episodes = self._rollout(state, steps, self.metrics, explore=explore)
            finished += [e for e in episodes if e.is_done]
            done = len({e.multi_agent_episode_id.rsplit("-", 1)[0] for e in finished})
        self._sample_state = None
        return finished

    def _steps_hint(self) -> int:
        return int(getattr(self.game, "max_steps", 0) or 64)

    def _reset_all(self) -> SampleState:
        """Every game reset, its seats drawn from the league's plan: a new `SampleState`."""
        game, settings = self.game, self._settings()
        start = game.reset(seed=SeedTree(settings.seed).runner(self.worker_index or 0))
        inputs = model_inputs_for(settings.history, hidden=settings.hidden)
        module_ids = tuple(self.module.keys())
        main = trained_module_in(module_ids, fallback_to_first=True)
        module_actions.eval_mode(self.module)
        seats = SeatPlan.mirror(
            module_ids=module_ids, main=main, num_games=game.num_games, num_seats=game.num_seats
        )
        seats.draw(np.arange(game.num_games), self._plan(), main=main)
        self._sample_state = SampleState(
            obs=start.obs,
            acting=start.acting,
            inputs=inputs,
            model_obs=inputs.start(start.obs, start.acting),
            module_ids=module_ids,
            main=main,
            trained=module_actions.trained_modules(
                self.module, module_ids, self.config.policies_to_train
            ),
            states=self._seat_states(module_ids, main),
            seats=seats,
            uids=np.arange(game.num_games, dtype=np.int64),
            next_uid=game.num_games,
            seat_t=np.zeros((game.num_games, game.num_seats), np.int64),
            stats=GameStats(
                num_games=game.num_games,
                num_seats=game.num_seats,
                components=game.reward_components,
            ),
            bc=BCRows.find(self._env_to_module, num_games=game.num_games),
            tag=uuid.uuid4().hex[:8],
        )
        return self._sample_state

    def _seat_states(self, module_ids: tuple[str, ...], main: str) -> SeatStates | None:
        """The seats' recurrent states (None for stateless modules) from the runner's
        `SeatActing`, restarted; kept across resets so that captured graphs stay valid."""
        game, settings = self.game, self._settings()
        if self._seat_acting is None:
            self._seat_acting = SeatActing(
                num_games=game.num_games,
                num_seats=game.num_seats,
                device=settings.acting_device,
                graphs=settings.cuda_graphs,
            )
        modules = {module_id: self.module[module_id] for module_id in module_ids}
        states = self._seat_acting.prepare(modules, main=main)
        if states is not None:
            self._positions = ChunkPositions(
                max_seq_len=int(self.module[main].model_config["max_seq_len"]),
                num_games=game.num_games,
                num_seats=game.num_seats,
            )
        return states

    def _plan(self) -> routing.RunnerPlan | None:
        """The league's slot plan on this process; None without a league (mirror games)."""
        if self.config.policy_mapping_fn is not routing.league_mapping_fn:
            return None
        return routing.current_plan()

    def _rollout(self, state: SampleState, steps: int, logger: Any, *, explore: bool) -> list[Any]:
        return self._build_episodes(state, self._play(state, steps, logger, explore=explore))

    def _rollout_batches(self, state: SampleState, steps: int, logger: Any) -> list[RolloutBatch]:
        """One `RolloutBatch` per trained module, for the array learner (no episodes)."""
        starts: list[dict[str, torch.Tensor]] = []
        arrays = self._play(state, steps, logger, explore=True, sequence_starts=starts)
        trained = [(i, m) for i, m in enumerate(state.module_ids) if m in state.trained]
        return rollout_batches(
            arrays,
            trained=trained,
            last_obs=state.model_obs,
            keys=(Columns.ACTION_LOGP, Columns.ACTION_DIST_INPUTS),
            env_steps=steps * self.num_envs,
            starts=starts,
            seq_len=self._seq_len(state),
            columns={state.bc.module_id: BC_COLUMNS} if state.bc is not None else None,
        )

    def _seq_len(self, state: SampleState) -> int:
        """The trained module's `max_seq_len` (0 for stateless modules)."""
        if state.states is None:
            return 0
        return int(self.module[state.main].model_config["max_seq_len"])

    def _build_episodes(self, state: SampleState, arrays: RolloutArrays) -> list[Any]:
        cut = cut_episodes(
            arrays,
            acting=state.acting,
            current_obs=state.model_obs,
            seat_t=state.seat_t,
            states=state.states,
            tag=state.tag,
            agent_ids=self.agent_ids,
            module_ids=state.module_ids,
            spaces=(self.game.observation_space, self.game.action_space),
        )
        state.carry = cut.carry
        return cut.episodes
