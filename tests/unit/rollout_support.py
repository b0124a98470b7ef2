"""Helpers for the rollout tests."""

import numpy as np

from rl_platform.sampling.rollout import Carry, RolloutArrays


def carry_of(arrays: RolloutArrays, *, game: int, seat: int, row: int, reward: float) -> Carry:
    """The open move of one seat at `row`, as the runner hands it to the next call."""
    return Carry(
        seats=np.asarray([[game, seat]]),
        obs=arrays.obs[row, [game], [seat]],
        actions=arrays.actions[row, [game], [seat]],
        rewards=np.asarray([reward], np.float32),
        module=arrays.module[row, [game], [seat]],
        extras={},
    )
