"""A run's observation filter, applied by a policy rebuilt from weights (no Ray).

A run with `env.observation_filter: mean_std` trained on observations that RLlib's
`MeanStdFilter` connector had normalised with its running statistics; a module rebuilt from
the checkpoint's weights must see them normalised the same way. The statistics come from the
same checkpoint (`rl_platform/rllib/filter_state.py` checks them), the arithmetic is RLlib's
(ray/rllib/utils/filter.py, `MeanStdFilter.__call__` with `update=False`, `RunningStat.var`
and `.std`): variance `sum_sq_diff / (n - 1)` as float32 (0 while n <= 1), std its square
root, then `(x - mean) / (std + SMALL_NUMBER)`, clipped to `[-clip, clip]`, in `x`'s dtype.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.rllib.filter_state import FILTER_CONNECTOR, filter_states

SMALL_NUMBER = 1e-6
"""RLlib's `SMALL_NUMBER` (ray/rllib/utils/numpy.py), which `MeanStdFilter` adds to the std
(the comment beside its import in filter.py says 1e-8; the constant is 1e-6)."""
FILTER_PATHS = (
    f"env_runner/env_to_module_connector/{FILTER_CONNECTOR}",
    f"env_to_module_connector/{FILTER_CONNECTOR}",
)
"""Where `Algorithm.get_state()` keeps the training filter: in the local env runner's state,
or, for an algorithm without one, in its own env-to-module connector's (both hold the
statistics merged across env runners after each iteration)."""


@dataclass(frozen=True)
class ObservationFilter:
    """One agent's `MeanStdFilter`, frozen (RLlib's `update=False`)."""

    mean: np.ndarray
    std: np.ndarray
    """RLlib's `RunningStat.std`: float32, from the unbiased variance."""
    de_mean: bool
    de_std: bool
    clip: float | None

    @classmethod
    def from_agent_state(cls, state: dict[str, Any]) -> "ObservationFilter":
        """From one agent's checked filter state (`filter_state.filter_states`)."""
        (stat,) = state["running_stats"]
        count = stat["num_pushes"]
        variance = (
            (stat["sum_sq_diff_array"] / (float(count) - 1)).astype(np.float32)
            if count > 1
            else np.zeros_like(stat["mean_array"]).astype(np.float32)
        )
        clip = state.get("clip_by_value")
        return cls(
            mean=stat["mean_array"],
            std=np.sqrt(np.maximum(0, variance)),
            de_mean=bool(state.get("de_mean_to_zero", True)),
            de_std=bool(state.get("de_std_to_one", True)),
            clip=None if clip is None else float(clip),
        )

    def apply(self, obs: Any) -> np.ndarray:
        """A batch of raw observations (or one) as the trained module saw them."""
        x = np.asarray(obs)
        dtype = x.dtype
        if self.de_mean:
            x = x - self.mean
        if self.de_std:
            x = x / (self.std + SMALL_NUMBER)
        if self.clip:  # RLlib's truth test: a clip of 0 clips nothing
            x = np.clip(x, -self.clip, self.clip)
        return x.astype(dtype)


def observation_filter_in(
    algorithm_state: Any, *, where: str, label: str
) -> ObservationFilter | None:
    """The training filter in a checkpoint's algorithm state; None for an unfiltered run."""
    found = filter_states(algorithm_state, where=where)
    agents = next((found[path] for path in FILTER_PATHS if path in found), None)
    if agents is None:
        return None
    if list(agents) != [None]:
        names = ", ".join(sorted(map(str, agents)))
        raise UserError(
            f"{label}: its run filtered each agent's observations with statistics of its own "
            f"({names}), and a policy loaded from it does not know which seat it plays; "
            "multi-agent runs with env.observation_filter are evaluated by their learning "
            "curve (`rlp plot`)"
        )
    return ObservationFilter.from_agent_state(agents[None])
