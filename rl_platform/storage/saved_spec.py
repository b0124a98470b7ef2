"""`spec.yaml`, the resolved spec saved beside every run and search: its one writer and reader.

A run folder (`rlp train`), a seed's folder (`rlp train --seeds`) and a search folder
(`rlp search`) each hold one, written when they start with secrets masked; a resume with a
changed spec writes `spec.resume-N.yaml` beside it. Every reader (rebuilding a run's module,
league tools, `rlp search --resume`, `rlp train --resume`, `rlp plot`) goes through here, so the
file has one parser (`tests/unit/test_saved_formats.py`).
"""

from pathlib import Path
from typing import Any

from rl_platform.spec import ExperimentSpec, load_spec
from rl_platform.storage.layout import SPEC_FILE
from rl_platform.utils.atomic import write_text_atomic
from rl_platform.utils.safe_yaml import dump_yaml, parse_yaml
from rl_platform.utils.secrets import mask_secrets


def spec_text(spec: ExperimentSpec) -> str:
    """The resolved spec as YAML, secrets masked."""
    return dump_yaml(mask_secrets(spec.dump()))


def saved_spec_path(folder: str | Path) -> Path:
    return Path(folder) / SPEC_FILE


def has_saved_spec(folder: str | Path) -> bool:
    return saved_spec_path(folder).is_file()


def write_saved_spec(run_dir: Path, spec: ExperimentSpec) -> None:
    """The resolved spec beside the run, secrets masked, so the run can be reproduced."""
    write_text_atomic(saved_spec_path(run_dir), spec_text(spec))


def write_resumed_spec(run_dir: Path, spec: ExperimentSpec, *, number: int) -> Path:
    """The spec of the `number`th resume, beside the original (`spec.resume-N.yaml`)."""
    path = run_dir / f"spec.resume-{number}.yaml"
    write_text_atomic(path, spec_text(spec))
    return path


def read_saved_spec(folder: str | Path) -> ExperimentSpec:
    """The folder's spec, validated (`SpecError` if it no longer validates)."""
    return load_spec(saved_spec_path(folder))


def read_saved_spec_tree(folder: str | Path) -> Any | None:
    """The folder's spec as written (a YAML tree, not validated), None when it has none."""
    path = saved_spec_path(folder)
    return parse_yaml(path.read_text(encoding="utf-8")) if path.is_file() else None


def spec_tree(spec: ExperimentSpec) -> Any:
    """`spec` as `read_saved_spec_tree` would read it back once written (secrets masked)."""
    return parse_yaml(spec_text(spec))
