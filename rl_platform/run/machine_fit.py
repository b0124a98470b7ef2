"""Refuse sizes this machine cannot hold, before Ray starts (no Ray here).

`training.train_batch_size: 1e12` or `env.envs_per_runner: 1e7` pass the schema (they are
positive integers) and then run until the kernel kills the process. A rough lower bound of the
memory a run needs, term by term, is compared with this machine's memory (the container's
cgroup limit where there is one): one line names the largest term's setting, the estimate and
the limit. The bounds are deliberately low (float32, a few copies), so any spec refused here
could not have run; a spec that passes may still need more.
"""

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from rl_platform.base.errors import UserError

GIB = 1024**3
FLOAT_BYTES = 4
BATCH_COPIES = 3
"""The batch exists as episodes, as the learner's columns and as tensors."""
OPTIMIZER_COPIES = 4
"""Weights, gradients and Adam's two moments."""
ACTIVATION_COPIES = 2
"""A forward pass's activations are kept for the backward pass."""
ENV_COPY_BYTES = 4 * 1024
"""The least one env copy costs beyond its observation buffers."""
ENV_RUNNER_BYTES = 256 * 1024**2
"""A remote env runner is a Python process with torch and Ray imported."""
USABLE_FRACTION = 0.8


class MachineFitError(UserError):
    """A size in the spec cannot fit this machine's memory; the message is one line."""


@dataclass(frozen=True)
class RunSizes:
    """The sizes that decide memory, read from a spec (see `sizes_of` in the caller)."""

    train_batch_size: int
    minibatch_size: int
    envs_per_runner: int
    env_runners: int
    observation_floats: int
    layer_widths: tuple[int, ...]
    """Input, hidden and output widths of the model's layers, in order."""
    remote_runners_here: bool = True
    """False when joining a cluster: remote env runners live on other nodes."""


def _dense_parameters(widths: tuple[int, ...]) -> int:
    return sum(a * b + b for a, b in itertools.pairwise(widths))


def memory_terms(sizes: RunSizes) -> dict[str, float]:
    """Bytes per setting: the lower bound of what each costs (see the module docstring)."""
    row_bytes = (2 * sizes.observation_floats + 16) * FLOAT_BYTES
    copies = max(1, sizes.env_runners) * sizes.envs_per_runner
    model_copies = 1 + (sizes.env_runners if sizes.remote_runners_here else 0)
    parameters = _dense_parameters(sizes.layer_widths)
    activations = min(sizes.minibatch_size, sizes.train_batch_size) * sum(sizes.layer_widths)
    terms = {
        "training.train_batch_size": float(sizes.train_batch_size) * row_bytes * BATCH_COPIES,
        "env.envs_per_runner": float(copies) * (ENV_COPY_BYTES + row_bytes),
        "model": float(parameters) * FLOAT_BYTES * (OPTIMIZER_COPIES + model_copies)
        + float(activations) * FLOAT_BYTES * ACTIVATION_COPIES,
    }
    if sizes.remote_runners_here:
        terms["resources.env_runners"] = float(sizes.env_runners) * ENV_RUNNER_BYTES
    return terms


def machine_memory_bytes() -> int | None:
    """Physical memory, or the cgroup's limit when it is lower (containers, CI); None where
    the OS does not say (no `sysconf`): the check is then skipped, never guessed."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            return min(physical, int(text))
    return physical


def check_fits(sizes: RunSizes, *, memory_bytes: int) -> None:
    """`MachineFitError` naming the largest term when the sum exceeds the usable memory."""
    terms = memory_terms(sizes)
    total = sum(terms.values())
    usable = memory_bytes * USABLE_FRACTION
    if total <= usable:
        return
    largest = max(terms, key=terms.__getitem__)
    shown = ", ".join(f"{name} {value / GIB:.3g} GiB" for name, value in terms.items())
    raise MachineFitError(
        f"{largest}: this run needs at least {total / GIB:.3g} GiB of memory ({shown}); this "
        f"machine has {memory_bytes / GIB:.3g} GiB ({USABLE_FRACTION:.0%} usable). Lower "
        f"{'its layer sizes' if largest == 'model' else largest}, or run it on a machine or "
        "cluster that holds it"
    )
