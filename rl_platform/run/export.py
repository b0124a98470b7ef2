"""`rlp export`: the policy weights of one module as a standalone safetensors file."""

from dataclasses import dataclass
from pathlib import Path

from safetensors.numpy import save as save_arrays

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import trained_module_in
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
from rl_platform.storage.checkpoints import load_checkpoint, resolve_checkpoint
from rl_platform.storage.layout import CHECKPOINTS_DIR
from rl_platform.utils.atomic import write_bytes_atomic


@dataclass(frozen=True)
class ExportedPolicy:
    path: Path
    module_id: str
    num_tensors: int


def export_policy(
    checkpoint: str | Path, out: str | Path, *, module_id: str | None = None
) -> ExportedPolicy:
    loaded = load_checkpoint(resolve_checkpoint(checkpoint))
    weights = module_weights(loaded.parts[ALGORITHM_PART])
    if module_id is None:
        module_id = trained_module_in(weights, fallback_to_first=True)
    if module_id not in weights:
        raise UserError(
            f"--module {module_id!r}: not in the checkpoint (modules: {', '.join(weights)})"
        )
    metadata = {"module_id": str(module_id), "source": str(loaded.path), "format": "rlp-policy-v1"}
    out_path = Path(out)
    _check_out_path(out_path, checkpoint=loaded.path)
    write_bytes_atomic(out_path, save_arrays(dict(weights[module_id]), metadata=metadata))
    return ExportedPolicy(out_path, str(module_id), len(weights[module_id]))


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
