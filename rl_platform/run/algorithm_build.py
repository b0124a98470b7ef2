"""Build the RLlib Algorithm of a run (or a search trial) with the extensions it needs.

The caller's choice of extensions lives here, once: the episode-metrics callback, the league
(its pool under the run's folder), then BC (teacher connectors, learner settings, schedule
callback; a no-op for specs without `bc:`, `init_from:` or `algo: BC`). BC comes last because
it appends its callbacks to those already set.
"""

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from rl_platform.bc.extension import bc_extension
from rl_platform.rllib.config import ConfigExtension, build_algorithm_config
from rl_platform.rllib.facts import RunFacts
from rl_platform.rllib.league_callback import league_extension
from rl_platform.run.episode_metrics import EpisodeMetricsCallback
from rl_platform.spec import ExperimentSpec


def _episode_metrics(config: Any, spec: ExperimentSpec) -> Any:
    return config.callbacks(EpisodeMetricsCallback)


def training_extensions(spec: ExperimentSpec, *, run_dir: Path | None) -> list[ConfigExtension]:
    """The extensions of a training run whose folder is `run_dir` (None: no league allowed)."""
    extensions: list[ConfigExtension] = [_episode_metrics]
    if spec.league is not None:
        if run_dir is None:
            raise ValueError("a league run needs a run folder for its pool")
        extensions.append(functools.partial(league_extension, run_dir=run_dir))
    return [*extensions, functools.partial(bc_extension, run_dir=run_dir)]


def build_algorithm(
    spec: ExperimentSpec,
    *,
    facts: RunFacts,
    run_dir: Path | None,
    extra: Sequence[ConfigExtension] = (),
) -> Any:
    """The spec's Algorithm with `training_extensions` (then `extra`), torch threads set as the
    spec asks."""
    if spec.resources.torch_threads is not None:
        torch.set_num_threads(spec.resources.torch_threads)
    extensions = [*training_extensions(spec, run_dir=run_dir), *extra]
    config = build_algorithm_config(spec, facts=facts, extensions=extensions)
    return config.build_algo()
