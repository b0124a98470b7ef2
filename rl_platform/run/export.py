"""`rlp export`: the policy weights of one module as a standalone safetensors file.

A run trained with `env.observation_filter: mean_std` acted on normalised observations, so the
file also holds the filter's frozen statistics (`observation_filter.mean`, `.std`) and, in its
metadata, the rule that applies them: without them the weights alone are a wrong policy.

The metadata also carries the run's resolved spec (`spec`, the text of its `spec.yaml`), so the
file alone rebuilds the policy: `policy://FILE.safetensors` (`rl_platform.policies.exported`).
`--dtype bf16` halves the file (a 4M-parameter policy: 16 MB -> 8 MB); the filter's statistics
keep their own dtypes.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from loguru import logger
from safetensors.torch import save as save_tensors

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import trained_module_in
from rl_platform.policies.exported import EXPORT_FORMAT, FILTER_CONFIG_KEY, FILTER_KEY, SPEC_KEY
from rl_platform.policies.observation_filter import (
    SMALL_NUMBER,
    ObservationFilter,
    observation_filter_in,
)
from rl_platform.policies.rebuild import run_dir_of
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
from rl_platform.storage.checkpoints import load_checkpoint, resolve_checkpoint
from rl_platform.storage.layout import CHECKPOINTS_DIR
from rl_platform.storage.saved_spec import read_saved_spec, spec_text
from rl_platform.utils.atomic import write_bytes_atomic

ExportDtype = Literal["fp32", "bf16"]


@dataclass(frozen=True)
class ExportedPolicy:
    path: Path
    module_id: str
    num_tensors: int
    """The module's tensors (the filter's two are not counted)."""
    filtered: bool = False
    """Whether the file carries the run's observation filter."""
    with_spec: bool = True
    """Whether the file carries the run's spec (a checkpoint without its run folder's
    `spec.yaml` exports weights only, which `policy://` cannot rebuild)."""


def export_policy(
    checkpoint: str | Path,
    out: str | Path,
    *,
    module_id: str | None = None,
    dtype: ExportDtype = "fp32",
) -> ExportedPolicy:
    loaded = load_checkpoint(resolve_checkpoint(checkpoint))
    weights = module_weights(loaded.parts[ALGORITHM_PART])
    if module_id is None:
        module_id = trained_module_in(weights, fallback_to_first=True)
    if module_id not in weights:
        raise UserError(
            f"--module {module_id!r}: not in the checkpoint (modules: {', '.join(weights)})"
        )
    metadata = {
        "module_id": str(module_id),
        "source": str(loaded.path),
        "format": EXPORT_FORMAT,
        "dtype": dtype,
    }
    spec = _run_spec_text(loaded.path)
    if spec is not None:
        metadata[SPEC_KEY] = spec
    out_path = Path(out)
    _check_out_path(out_path, checkpoint=loaded.path)
    tensors = {name: _as_tensor(array, dtype) for name, array in weights[module_id].items()}
    found = observation_filter_in(
        loaded.parts[ALGORITHM_PART], where=str(loaded.path), label=str(loaded.path)
    )
    if found is not None:
        tensors |= {name: torch.from_numpy(a) for name, a in _filter_arrays(found).items()}
        metadata |= _filter_metadata(found)
    write_bytes_atomic(out_path, save_tensors(tensors, metadata=metadata))
    if spec is None:
        logger.warning(
            "{}: no spec.yaml in its run folder; {} holds the weights only (policy:// needs "
            "the spec: export from the run folder)",
            loaded.path,
            out_path,
        )
    return ExportedPolicy(
        out_path, str(module_id), len(weights[module_id]), found is not None, spec is not None
    )


def _run_spec_text(checkpoint: Path) -> str | None:
    """The checkpoint's run spec as written into the file; None when no run folder holds one."""
    try:
        return spec_text(read_saved_spec(run_dir_of(checkpoint)))
    except UserError:
        return None


def _as_tensor(array: np.ndarray, dtype: ExportDtype) -> torch.Tensor:
    tensor = torch.from_numpy(np.ascontiguousarray(array))
    if dtype == "bf16" and tensor.is_floating_point():
        return tensor.to(torch.bfloat16)
    return tensor


def _filter_arrays(found: ObservationFilter) -> dict[str, np.ndarray]:
    # RLlib's dtypes (float64 mean, float32 std): the arithmetic is then RLlib's to the bit.
    return {f"{FILTER_KEY}.mean": np.asarray(found.mean), f"{FILTER_KEY}.std": found.std}


def _filter_metadata(found: ObservationFilter) -> dict[str, str]:
    centre = "x - mean" if found.de_mean else "x"
    scaled = f"({centre}) / (std + {SMALL_NUMBER:g})" if found.de_std else f"({centre})"
    clipped = f", clipped to [-{found.clip:g}, {found.clip:g}]" if found.clip else ""
    switches = {"de_mean": found.de_mean, "de_std": found.de_std, "clip": found.clip}
    return {
        FILTER_KEY: f"mean_std: the module sees {scaled}{clipped}",
        FILTER_CONFIG_KEY: json.dumps(switches),
    }


def _check_out_path(out: Path, *, checkpoint: Path) -> None:
    """Refuse to write into a checkpoint folder (it would break its hashes) or onto a folder."""
    if out.is_dir():
        raise UserError(f"OUT {out}: is a folder; name the .safetensors file to write")
    target = out.resolve()
    if target.parent == checkpoint.resolve() or any(
        part.name == CHECKPOINTS_DIR for part in target.parents
    ):
        raise UserError(
            f"OUT {out}: inside a run's checkpoints; writing there would corrupt a checkpoint. "
            "Export to a path outside checkpoints/"
        )
