"""One search trial as a Tune function trainable: the sampled spec trains in the same
`TrainingLoop` as `rlp train`, reporting to Tune and checkpointing in rl_platform's pickle-free
format.

Each result carries `trial_status` (ok | collapsed | nan) and `stop_reason` (empty while the
trial runs). A trial stops itself on the spec's own `stop`, on entropy collapse below
`health.min_entropy` and on a NaN/Inf update; the scheduler stops it at rungs and at `max_t`.
Under `halving` the trial also checkpoints where it crosses each rung (`checkpoint_marks`):
the scheduler pauses it there, and it resumes from that checkpoint (`tune.get_checkpoint()`).
A league spec's pool lives in the trial's own folder (`trial_<id>/league`), and its state is
part of every checkpoint, as in `rlp train`.
"""

import math
import tempfile
from pathlib import Path
from typing import Any

from ray import tune

from rl_platform.rllib.facts import run_facts
from rl_platform.run.algorithm_build import build_algorithm
from rl_platform.run.health import HealthVerdict
from rl_platform.run.loop import Checkpoint, LoopStart, TrainingLoop, resume_from
from rl_platform.run.stopping import CheckpointMarks
from rl_platform.search.folder import trial_folder
from rl_platform.search.results import STOP_REASON, TRIAL_STATUS
from rl_platform.search.space import apply_sample
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint


def search_trainable(
    config: dict[str, Any],
    *,
    base_spec: dict[str, Any],
    metric: str,
    search_dir: str,
    checkpoint_marks: CheckpointMarks | None = None,
) -> None:
    """Train `base_spec` with the sampled values in `config` until a stop (Tune's or ours);
    checkpoint at each of `checkpoint_marks` too."""
    spec = apply_sample(base_spec, config)
    # Not Tune's get_trial_dir(): that is a per-session staging folder, and a resumed search
    # must find the league pool again. Tune's folder of this trial is stable and unique.
    trial_dir = trial_folder(Path(search_dir), tune.get_context().get_trial_id())
    facts = run_facts(spec)  # a trial's entry: it runs in its own Tune worker process
    algo = build_algorithm(spec, facts=facts, run_dir=trial_dir)
    try:
        start = LoopStart()
        checkpoint = tune.get_checkpoint()
        if checkpoint is not None:
            with checkpoint.as_directory() as folder:
                start = resume_from(algo, load_checkpoint(folder))
        TrainingLoop(
            spec,
            algo,
            facts=facts,
            reporter=TuneReporter(metric),
            start=start,
            stop_on_collapse=True,  # a collapsed trial wastes the search's budget
            checkpoint_at_stop=True,  # the best trial's checkpoint is the search's result
            checkpoint_marks=checkpoint_marks,
        ).run()
    finally:
        algo.stop()


class TuneReporter:
    """Reports each iteration to Tune with the trial's status; a checkpoint goes with it."""

    def __init__(self, metric: str) -> None:
        self.metric = metric
        self._saved: tuple[tempfile.TemporaryDirectory, Path] | None = None

    def save(self, checkpoint: Checkpoint) -> None:
        """Into a temp folder that Tune copies into the trial's storage at the next report."""
        folder = tempfile.TemporaryDirectory(prefix="rlp-trial-")
        path = CheckpointStore(folder.name, keep_last=1).save(
            iteration=checkpoint.iteration, parts=checkpoint.parts, meta=checkpoint.meta
        )
        self._saved = (folder, path)

    def report(
        self,
        metrics: dict[str, float],
        *,
        verdict: HealthVerdict,
        stop_reason: str,
        checkpoint: Checkpoint | None,
    ) -> None:
        result: dict[str, Any] = {
            **metrics,
            TRIAL_STATUS: str(verdict.status),
            STOP_REASON: stop_reason,
        }
        if self.metric not in result:
            # Tune refuses results without the metric (no episode has ended yet).
            result[self.metric] = math.nan
        saved, self._saved = self._saved, None
        if checkpoint is None or saved is None:
            tune.report(result)
            return
        folder, path = saved
        with folder:  # Tune copies the folder during report(); the temp one can go after
            tune.report(result, checkpoint=tune.Checkpoint.from_directory(str(path)))
