"""`policy://FILE.safetensors`: a policy from one file written by `rlp export`.

The file holds the module's weights (fp32 or bf16), the run's resolved spec in its metadata
(`spec`), and, for a filtered run, the observation filter's statistics and switches. Nothing
in it is unpickled: safetensors stores raw arrays, the spec is YAML text read by our safe
parser and validated like any spec. So a champion can be shipped and played without its run
folder: `rlp eval policy://experiments/pretrained/duel_recipe.safetensors --env duel`.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from safetensors import SafetensorError, safe_open

from rl_platform.base.errors import SpecError, UserError
from rl_platform.policies.observation_filter import ObservationFilter
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.loading import validate_spec_data
from rl_platform.utils.safe_yaml import YamlLimitError, YamlTagError, parse_yaml

EXPORT_FORMAT = "rlp-policy-v1"
SPEC_KEY = "spec"
"""Metadata key of the run's resolved spec (the text of its `spec.yaml`, secrets masked)."""
FILTER_KEY = "observation_filter"
"""Prefix of the filter's tensors and metadata: a module's parameter names never start so."""
FILTER_CONFIG_KEY = f"{FILTER_KEY}.config"
"""Metadata key of the filter's switches (JSON: de_mean, de_std, clip)."""


@dataclass(frozen=True)
class ExportedFile:
    """What one exported file holds, read and checked."""

    spec: ExperimentSpec
    weights: dict[str, np.ndarray]
    """The module's tensors as float32 (bf16 files are widened) or their own integer dtype."""
    observation_filter: ObservationFilter | None


def read_exported(path: Path, *, label: str) -> ExportedFile:
    """Read `path`; a `UserError` naming it for anything that is not an export of ours."""
    if not path.is_file():
        raise UserError(f"{label}: {path} does not exist")
    try:
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
            tensors = {name: handle.get_tensor(name) for name in handle.keys()}  # noqa: SIM118
    except (SafetensorError, OSError, ValueError) as exc:
        raise UserError(f"{label}: not a safetensors file ({exc})") from None
    if metadata.get("format") != EXPORT_FORMAT or SPEC_KEY not in metadata:
        raise UserError(
            f"{label}: {path} carries no policy spec (format {metadata.get('format')!r}); "
            f"export it again with this version's `rlp export CHECKPOINT {path.name}`"
        )
    try:
        spec = validate_spec_data(parse_yaml(metadata[SPEC_KEY]), source=f"{label} (spec)")
    except (SpecError, YamlTagError, YamlLimitError, yaml.YAMLError) as exc:
        raise UserError(f"{label}: its spec no longer validates: {exc}") from None
    arrays = {name: _as_array(tensor) for name, tensor in tensors.items()}
    module = {name: a for name, a in arrays.items() if not name.startswith(f"{FILTER_KEY}.")}
    return ExportedFile(spec, module, _observation_filter(arrays, metadata, label=label))


def _as_array(tensor: Any) -> np.ndarray:
    import torch

    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def _observation_filter(
    arrays: dict[str, np.ndarray], metadata: dict[str, str], *, label: str
) -> ObservationFilter | None:
    if FILTER_CONFIG_KEY not in metadata:
        return None
    try:
        switches = json.loads(metadata[FILTER_CONFIG_KEY])
        return ObservationFilter(
            mean=arrays[f"{FILTER_KEY}.mean"],
            std=arrays[f"{FILTER_KEY}.std"],
            de_mean=bool(switches["de_mean"]),
            de_std=bool(switches["de_std"]),
            clip=None if switches["clip"] is None else float(switches["clip"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{label}: its observation filter is incomplete ({exc})") from None


def exported_env(path: Path, *, label: str) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    """(env id, wrappers, kwargs) the exported policy was trained with."""
    spec = read_exported(path, label=label).spec
    return spec.env.id, tuple(spec.env.wrappers), dict(spec.env.kwargs)
