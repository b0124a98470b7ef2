"""The search folder `<out>/search/<name>/<YYYYmmdd-HHMMSS>/`: Tune's experiment folder (one
`trial_<id>/` per trial with progress.csv, result.json, TensorBoard events and checkpoints) plus
ours: spec.yaml (the resolved spec, search block included), results.csv, best.yaml, search.log.
"""

import json
from pathlib import Path
from typing import Any

from rl_platform.base.errors import UserError
from rl_platform.spec import ExperimentSpec
from rl_platform.storage.layout import SPEC_FILE
from rl_platform.storage.run_dir import new_run_dir
from rl_platform.storage.saved_spec import (
    has_saved_spec,
    read_saved_spec,
    saved_spec_path,
    write_saved_spec,
)
from rl_platform.utils.secrets import MASK

RESULTS_FILE, BEST_FILE, LOG_FILE = "results.csv", "best.yaml", "search.log"
TRIAL_RESULTS_FILE = "result.json"
"""Tune's log of one trial's reports, one JSON object per line (ray.tune.result)."""


def trial_folder(search_dir: str | Path, trial_id: str) -> Path:
    """Tune's folder of one trial (its `trial_dirname_creator`); a league trial keeps its pool
    there, so no two trials share one."""
    return Path(search_dir) / f"trial_{trial_id}"


def trial_results(trial_dir: str | Path) -> list[dict[str, Any]]:
    """Every result one trial reported, oldest first (its `result.json`)."""
    lines = (Path(trial_dir) / TRIAL_RESULTS_FILE).read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def new_search_dir(out_dir: str | Path, spec: ExperimentSpec) -> Path:
    """A fresh folder holding the spec that `rlp search --resume` will run again."""
    folder = new_run_dir(Path(out_dir) / "search", spec.name).resolve()
    write_saved_spec(folder, spec)
    return folder


def _masked(data: Any) -> bool:
    if isinstance(data, dict):
        return any(_masked(v) for v in data.values())
    if isinstance(data, list):
        return any(_masked(v) for v in data)
    return isinstance(data, str) and MASK in data  # whole or partial (`https://u:***@db`)


def saved_spec(search_dir: str | Path) -> ExperimentSpec:
    """The spec a search folder was started with; refuses one whose secrets were masked."""
    path = saved_spec_path(search_dir)
    if not has_saved_spec(search_dir):
        raise UserError(f"--resume {search_dir}: not a search folder (no {SPEC_FILE})")
    spec = read_saved_spec(search_dir)
    if spec.search is None:
        raise UserError(
            f"--resume {search_dir}: its {SPEC_FILE} has no `search:` block, so it is not a "
            "search folder (a training run resumes with `rlp train SPEC --resume RUN_DIR`)"
        )
    if _masked(spec.dump()):
        raise UserError(
            f"{path}: secret values were masked when the search started ({MASK!r}); a resumed "
            "search would run with them. Start a new search from the spec file instead."
        )
    return spec
