"""The sizes of a spec that decide its memory (`machine_fit.RunSizes`), read once in the driver.

The observation and action widths are only known once an env is built, so one throwaway env
with the spec's wrappers is built here (as the probe does), before Ray starts.
"""

import os

import gymnasium as gym

from rl_platform.rllib.facts import RunFacts
from rl_platform.run.machine_fit import RunSizes, check_fits, machine_memory_bytes
from rl_platform.spec import ExperimentSpec

_SIZE_FIELDS = ("hidden", "encoder", "obs_encoder", "d_model", "lstm_cell_size", "actor", "critic")
"""Model fields that hold layer widths, in the order a forward pass meets them."""


def _widths(model: object) -> list[int]:
    widths: list[int] = []
    for name in _SIZE_FIELDS:
        value = getattr(model, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            widths.append(value)
        elif isinstance(value, list):
            widths.extend(v for v in value if isinstance(v, int))
    return widths


def sizes_of(spec: ExperimentSpec, facts: RunFacts) -> RunSizes:
    observation = max(gym.spaces.flatdim(space) for space in facts.observation_spaces)
    actions = gym.spaces.flatdim(facts.trained_action_space)
    batch = spec.training.train_batch_size
    return RunSizes(
        train_batch_size=batch,
        minibatch_size=getattr(spec.training, "minibatch_size", batch),
        envs_per_runner=spec.env.envs_per_runner,
        env_runners=spec.resources.env_runners,
        observation_floats=observation,
        layer_widths=(observation, *_widths(spec.model), actions),
        remote_runners_here=not os.environ.get("RAY_ADDRESS"),
    )


def check_spec_fits_machine(spec: ExperimentSpec, facts: RunFacts) -> None:
    """`MachineFitError` (one line, exit 2) when `spec` cannot fit this machine's memory."""
    memory = machine_memory_bytes()
    if memory is not None:
        check_fits(sizes_of(spec, facts), memory_bytes=memory)
