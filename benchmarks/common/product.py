"""The product's entry points as the benchmarks use them: Ray through `ensure_ray`, training
through `rl_platform.train` (the loop, callbacks and extensions of `rlp train`, watched with
its `on_iteration` hook) or through the `rlp train` command in a fresh process."""

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rl_platform.ray_runtime.session import ensure_ray

QUIET = ("logging.wandb=off", "logging.tensorboard=false")
"""Overrides that keep a benchmark's runs off W&B and TensorBoard (metrics.jsonl stays)."""


def start_ray(num_cpus: int | None = None) -> None:
    """The local Ray of `rlp train` (or the cluster in RAY_ADDRESS), with `num_cpus` and the
    workers' output left in Ray's logs; `rl_platform.train` then joins it."""
    ensure_ray(num_cpus, log_to_driver=False)


def rlp_train(
    spec_path: Path, *, out: Path, overrides: Sequence[str], profile: str | None = None
) -> Path:
    """`rlp train SPEC --out OUT [--profile P] --set ...` in a fresh process (its wall time
    includes Ray's start); the run folder it made."""
    command = [str(Path(sys.executable).parent / "rlp"), "train", str(spec_path)]
    command += ["--out", str(out), *(["--profile", profile] if profile else [])]
    for override in overrides:
        command += ["--set", override]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return max((p for p in out.glob("*/*") if p.is_dir()), key=lambda p: p.stat().st_mtime)


def live_weights(algo: Any, module_id: str = "main") -> dict[str, np.ndarray]:
    """The current weights of a training run's module as its learner holds them (critic
    included; inside an `on_iteration` hook), as `rl_platform.policies.learned_policy` and the
    league's pool take them."""
    state = algo.learner_group.get_weights(module_ids=[module_id])[module_id]
    return {
        name: value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        for name, value in state.items()
    }
