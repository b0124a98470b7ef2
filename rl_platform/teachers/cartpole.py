"""A scripted CartPole-v1 controller, vectorized over a batch of observations.

Observation `[x, x_dot, theta, theta_dot]`; action 1 pushes the cart right, 0 left. The
controller pushes towards where the pole is falling: the sign of
`theta + angular_gain * theta_dot + position_gain * (x + x_dot)`. The angular-velocity term
damps the swing (with the angle alone the pole oscillates and falls within ~50 steps); the small
position term keeps the cart from drifting off the track over a 500-step episode.
"""

from collections.abc import Mapping

import numpy as np

from rl_platform.base.errors import UserError

DEFAULT_ANGULAR_GAIN = 0.5
DEFAULT_POSITION_GAIN = 0.05


def balance_score(obs: np.ndarray, *, angular_gain: float, position_gain: float) -> np.ndarray:
    """Positive where pushing right helps; shape [B]."""
    obs = np.asarray(obs, dtype=np.float64).reshape(-1, 4)
    x, x_dot, theta, theta_dot = obs.T
    return theta + angular_gain * theta_dot + position_gain * (x + x_dot)


def make_balance(params: Mapping[str, str]) -> "BalanceController":
    """`scripted://cartpole/balance[?angular_gain=0.5&position_gain=0.05]`."""
    known = {"angular_gain", "position_gain"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise UserError(f"cartpole/balance: unknown parameter(s) {unknown}; known: {sorted(known)}")
    try:
        gains = {key: float(value) for key, value in params.items()}
    except ValueError:
        raise UserError(
            f"cartpole/balance: parameters must be numbers, got {dict(params)}"
        ) from None
    return BalanceController(
        angular_gain=gains.get("angular_gain", DEFAULT_ANGULAR_GAIN),
        position_gain=gains.get("position_gain", DEFAULT_POSITION_GAIN),
    )


class BalanceController:
    """`act(obs[B, 4], rng) -> actions[B]` (int64); deterministic, `rng` is unused."""

    def __init__(self, *, angular_gain: float, position_gain: float) -> None:
        self.angular_gain = angular_gain
        self.position_gain = position_gain

    def __call__(self, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        score = balance_score(obs, angular_gain=self.angular_gain, position_gain=self.position_gain)
        return (score > 0).astype(np.int64)
