"""The folder of a multi-seed experiment, `<out>/seeds/<name>/<YYYYmmdd-HHMMSS>/`:

```
  seed_<N>/            one normal `rlp train` run folder per seed (its spec.yaml has seed N)
  trial_metrics.json   the aggregate over seeds (`rl_platform.multi_seed.summary`)
  train.log            Ray's notices from the driver (each seed's own are in its train.log)
  tune/                Ray Tune's experiment state and per-trial logs (a failed seed's error)
```
"""

from collections.abc import Sequence
from pathlib import Path

from rl_platform.spec import ExperimentSpec
from rl_platform.storage.run_dir import new_run_dir

SEEDS_DIR, TUNE_DIR = "seeds", "tune"


def seed_run_dir(parent: str | Path, seed: int) -> Path:
    """The run folder of one seed inside the experiment's folder."""
    return Path(parent) / f"seed_{seed}"


def new_seeds_dir(out_dir: str | Path, spec: ExperimentSpec, seeds: Sequence[int]) -> Path:
    """A fresh experiment folder (absolute: Tune and every trial write under it) holding an
    empty run folder per seed."""
    parent = new_run_dir(Path(out_dir) / SEEDS_DIR, spec.name).resolve()
    for seed in seeds:
        seed_run_dir(parent, seed).mkdir()
    return parent
