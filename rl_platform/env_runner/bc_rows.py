"""BC+PPO in the array env runner: teacher labels and teacher-led actions per row, batched.

The stock path labels each acting agent in the `TeacherLabels` env-to-module piece and
overrides teacher-led actions in `TeacherLedActions` (rl_platform/bc/). The array runner
keeps the `TeacherLabels` piece in its (unused) env-to-module pipeline as the holder of the
BC settings the driver pushes (`rl_platform.bc.callback.apply_to_env_runner`) and of the
teacher, and does the same work for all of the cloned module's rows at once:

* the mode of a row comes from its game index, as the stock path's env index
  (`rl_platform.imitation.slicing.slice_bounds`);
* every row gets `teacher_action` and `bc_mode`; teacher-led rows act with the teacher and
  their `action_logp` is the student's log-probability of that action (like
  `TeacherLedActions`), so the learner reads the same columns as on the stock path.
"""

from typing import Any

import numpy as np

from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.env_runner.module_actions import PolicyOutput
from rl_platform.imitation.labeler import TeacherLabeler, find_labelers
from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION, BCMode, slice_bounds
from rl_platform.sampling.game_stats import WINDOW
from rl_platform.sampling.rollout import RolloutArrays

BC_COLUMNS = (TEACHER_ACTION, BC_MODE)
"""The per-step columns these rows add (what the array learner reads of them)."""


class BCRows:
    """Labels the cloned module's rows (see the module docstring)."""

    def __init__(self, piece: TeacherLabeler, *, num_games: int) -> None:
        self.piece = piece
        self.module_id = next(iter(piece.modules)) if piece.multi_agent else MAIN_MODULE_ID
        self.num_games = num_games
        self.game_mode = np.full(num_games, -1, np.int64)

    @classmethod
    def find(cls, pipeline: Any, *, num_games: int) -> "BCRows | None":
        pieces = find_labelers(pipeline)
        return cls(pieces[0], num_games=num_games) if pieces else None

    def modes(self, games: np.ndarray) -> np.ndarray:
        settings = self.piece.settings
        teacher_end, student_end = slice_bounds(
            num_envs=self.num_games,
            teacher_led=settings.teacher_led,
            student_led=settings.student_led,
        )
        return np.select(
            [games < teacher_end, games < student_end],
            [BCMode.TEACHER_LED, BCMode.STUDENT_LED],
            BCMode.PLAIN,
        ).astype(np.int64)

    def label(
        self,
        arrays: RolloutArrays,
        row: int,
        games: np.ndarray,
        seats: np.ndarray,
        obs: Any,
        output: PolicyOutput,
        *,
        uids: np.ndarray,
    ) -> None:
        """Write the BC columns of these rows; teacher-led rows take the teacher's action."""
        uri = self.piece.settings.teacher
        if uri is None:  # a phase without a teacher: plain PPO rows, no labels
            teacher = np.full(len(games), -1, np.int64)
            modes = np.full(len(games), BCMode.PLAIN, np.int64)
        else:
            keys = [(int(uids[g]), int(p)) for g, p in zip(games, seats, strict=True)]
            teacher = self.piece.teacher().act(
                uri, obs, keys=keys, live_episodes=set(uids.tolist())
            )
            modes = self.modes(games)
        led = modes == BCMode.TEACHER_LED
        if led.any():
            output.actions = np.where(led, teacher, output.actions)
        arrays.record_extra(TEACHER_ACTION, row, (games, seats), teacher.astype(np.int64))
        arrays.record_extra(BC_MODE, row, (games, seats), modes)
        self.game_mode[games] = modes

    def log_results(self, results: list[tuple], logger: Any) -> None:
        """`bc/...` return and win-rate metrics per mode, as `BCCallback.on_episode_end`."""
        for game, _seat, outcome, episode_return in results:
            mode = int(self.game_mode[game])
            if mode < 0:
                continue
            name = BCMode(mode).name.lower()
            student = mode != BCMode.TEACHER_LED
            score = outcome.score
            logger.log_value(f"bc/return_mean/{name}", episode_return, window=WINDOW)
            logger.log_value(f"bc/win_rate/{name}", score, window=WINDOW)
            if student:
                logger.log_value("bc/student_return_mean", episode_return, window=WINDOW)
                logger.log_value("bc/student_win_rate", score, window=WINDOW)
            self.game_mode[game] = -1
