"""What the benchmark scripts share.

Importing this package loads neither Ray nor an RLlib adapter (the plain-torch yardsticks
import it: tests/unit/test_plain_torch_recipe.py), so it re-exports the Ray-free helpers only:

* seeds and spread (`spread`): `--seeds`/`--quick`, ratios as median, min and max;
* GAE (`gae`): the plain-torch yardsticks' advantages, with RLlib's semantics;
* output (`output`): the machine and load note, JSON results, side-by-side timing;
* where things are (`paths`): the repository and its experiment files.

The helpers that reach the product sit in submodules, imported by name:
`benchmarks.common.product` (Ray, training through `rl_platform.train` and `rlp train`),
`benchmarks.common.arena` (arena games against a policy URI), `benchmarks.common.style_arena`
(a trained duel run against the scripted styles) and `benchmarks.common.fan_out` (jobs as Ray
tasks).
"""

from benchmarks.common.gae import compute_gae, standardize
from benchmarks.common.output import machine_line, side_by_side, write_json
from benchmarks.common.paths import EXPERIMENTS, REPO
from benchmarks.common.spread import (
    DEFAULT_SEEDS,
    Spread,
    add_seed_options,
    ratio_line,
    seeds_to_run,
)

__all__ = [
    "DEFAULT_SEEDS",
    "EXPERIMENTS",
    "REPO",
    "Spread",
    "add_seed_options",
    "compute_gae",
    "machine_line",
    "ratio_line",
    "seeds_to_run",
    "side_by_side",
    "standardize",
    "write_json",
]
