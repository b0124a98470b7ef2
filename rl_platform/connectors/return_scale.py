"""Reward scaling by the running spread of the discounted return (pure: numpy, no Ray).

CleanRL's MuJoCo PPO wraps each env in gymnasium's `NormalizeReward(gamma)` and clips the
result to [-10, 10] (https://github.com/vwxyzjn/cleanrl/blob/master/cleanrl/ppo_continuous_action.py);
SB3's RL Zoo does the same with `VecNormalize(norm_reward=True)`. The rule: keep a discounted
sum of each episode's rewards, `G_t = gamma * G_{t-1} + r_t`, track the running variance of
every `G_t` seen, and hand the learner `clip(r_t / sqrt(var + eps), -10, 10)`.

RLlib's new API stack has no such piece, so rl_platform applies this rule in a learner
connector (`scale_rewards.py`) rather than in the env: the env runner's episode returns, which
every metric and stop condition reads, stay the env's own rewards. Two differences from the
wrapper, both small: the variance is updated once per episode chunk before the chunk is
scaled (the wrapper updates before each step), and the running sum restarts after a
truncation as after a termination (the wrapper keeps summing across a time-limit reset).
"""

import numpy as np
from gymnasium.wrappers.utils import RunningMeanStd

REWARD_CLIP = 10.0
"""CleanRL's `TransformReward(lambda r: np.clip(r, -10, 10))`, SB3's `clip_reward=10`."""
EPSILON = 1e-8
"""gymnasium's `NormalizeReward(epsilon=1e-8)`."""


class ReturnScale:
    """The running statistics and the open episodes' discounted sums (module docstring)."""

    def __init__(self, *, gamma: float) -> None:
        self.gamma = gamma
        self.returns = RunningMeanStd(shape=())
        self._open: dict[str, float] = {}
        self._seen: dict[str, float] = {}

    def scale(self, rewards: np.ndarray, *, episode: str, terminated: bool) -> np.ndarray:
        """One episode chunk's rewards, scaled; the chunk's discounted sum carries over to the
        episode's next chunk (same `episode`) unless `terminated`."""
        running = self._open.get(episode, 0.0)
        sums = np.empty(len(rewards), dtype=np.float64)
        for step, reward in enumerate(rewards):
            running = self.gamma * running + float(reward)
            sums[step] = running
        if len(sums):
            self.returns.update(sums)
        if not terminated:
            self._seen[episode] = running
        return np.clip(
            np.asarray(rewards, dtype=np.float64) / np.sqrt(self.returns.var + EPSILON),
            -REWARD_CLIP,
            REWARD_CLIP,
        ).astype(np.float32)

    def end_batch(self) -> None:
        """Keep only the sums of episodes that had a chunk in this batch: an episode cut by
        the rollout continues in the next batch; one that was not seen has ended."""
        self._open, self._seen = self._seen, {}

    def std(self) -> float:
        """The divisor now: the running standard deviation of the discounted return."""
        return float(np.sqrt(self.returns.var + EPSILON))

    def state(self) -> dict[str, float]:
        """The running statistics, for a checkpoint. The open episodes' sums are left out: a
        resumed run's env runners start new episodes, so no chunk would continue them."""
        returns = self.returns
        return {
            "mean": float(returns.mean),
            "var": float(returns.var),
            "count": float(returns.count),
        }

    def restore(self, state: dict[str, float]) -> None:
        """Continue from `state()`'s statistics (a `ValueError` for anything else)."""
        try:
            mean, var, count = (float(state[key]) for key in ("mean", "var", "count"))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not reward-scale statistics: {state!r:.120}") from exc
        if not (np.isfinite([mean, var, count]).all() and var >= 0 and count > 0):
            raise ValueError(f"reward-scale statistics out of range: {state!r:.120}")
        self.returns.mean, self.returns.var = np.float64(mean), np.float64(var)
        self.returns.count = count
