"""rl_platform: experiments as files on RLlib's new API stack.

`from rl_platform import load_spec, train` gives the Python API of `rlp train`. Both are
imported lazily: every `rl_platform.*` import runs this file first, and `rlp --help` or
`rlp envs` needs neither the spec schema (pydantic models, OmegaConf: 0.3-0.8 s on a 2-core
machine) nor the training stack (Ray, torch). See docs/training.md, "Start-up".
"""

import os
from typing import TYPE_CHECKING, Any

# Before anything imports Ray, which reads this once. Under `uv run` Ray otherwise gives every
# worker of the embedded local Ray a zipped copy of the current folder as its working
# directory and a fresh `uv run` environment built inside it: seconds more per worker start
# (IMPALA's LSTM test 30 s -> 18 s without), and a worker that writes a relative path writes
# into that copy. A local Ray's workers need neither: they share this machine's folder and
# environment. Cluster jobs are not started by `uv run`, so this changes nothing there.
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")

if TYPE_CHECKING:
    from rl_platform.run.train import train
    from rl_platform.spec import load_spec

__all__ = ["load_spec", "train"]


def __getattr__(name: str) -> Any:
    if name == "load_spec":
        from rl_platform.spec import load_spec

        return load_spec
    if name == "train":
        from rl_platform.run.train import train

        return train
    raise AttributeError(f"module 'rl_platform' has no attribute {name!r}")
