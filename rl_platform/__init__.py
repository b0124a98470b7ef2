"""rl_platform: experiments as files on RLlib's new API stack.

`from rl_platform import load_spec, train` gives the Python API of `rlp train`. `train` is
imported lazily so that importing the package (and validating specs) never starts or imports Ray.
"""

from typing import Any

from rl_platform.spec import load_spec

__all__ = ["load_spec", "train"]


def __getattr__(name: str) -> Any:
    if name == "train":
        from rl_platform.run.train import train

        return train
    raise AttributeError(f"module 'rl_platform' has no attribute {name!r}")
