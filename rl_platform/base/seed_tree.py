"""Every seed a run or a tool derives from one root seed, in one place (no Ray, no numpy).

A root seed fans out to env copies (RLlib's per-runner, per-vector-index copies and the array
runner's game batch), learners, evaluation episodes, the seatings of a round robin, the two
seat orders of an arena evaluation, an arena game's action draws and a runner's league-plan
stream. The strides keep the copies of one env runner apart from the next runner's
(`ENV_COPY_STRIDE` leaves room for 1000 copies per runner; `env.envs_per_runner` is far below
that) and the games of one round-robin seating apart from the next seating's (a prime stride).

The values are the ones the platform used before this module gathered them (checkpoints and
the determinism tests compare runs, so keeping them keeps results comparable).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ENV_COPY_STRIDE = 1000
"""Seeds of env runner `w`'s copies start at `root + w * ENV_COPY_STRIDE`."""
SEED_KEY = "seed"
"""The env_config key of an env's own seed (the duel's `env.kwargs.seed`, a user env's)."""
SEATING_STRIDE = 7919
"""Round-robin seating `i` plays with `root + i * SEATING_STRIDE` (a prime)."""

ARENA_CHUNK_STRIDE = 104729
"""Arena chunk `k` of a seat order plays with `seat_order + k * ARENA_CHUNK_STRIDE` (a prime)."""


@dataclass(frozen=True)
class SeedTree:
    """The seeds derived from `root`; `root` None (a random run) gives None where an env or
    runner accepts None, and 0 where a generator needs an int."""

    root: int | None

    def env_copy(self, *, worker: int, vector: int) -> int | None:
        """One env copy: RLlib's `worker_index` (0 is the driver's) and `vector_index`."""
        if self.root is None:
            return None
        return int(self.root) + worker * ENV_COPY_STRIDE + vector

    def runner(self, worker: int) -> int | None:
        """The game batch of the array runner `worker` (its copies are one vectorized game)."""
        return self.env_copy(worker=worker, vector=0)

    def learner(self, index: int) -> int:
        """Learner `index`'s own generators (BC's label replay)."""
        return (self.root or 0) + index

    def replay(self) -> int:
        """The off-policy replay store's sampling generator (docs/off_policy.md)."""
        return self.learner(0)

    def off_policy_acting(self) -> int:
        """The off-policy path's acting draws (SAC's Gaussian noise, DQN's epsilon)."""
        return self.learner(0) + 1

    def off_policy_update(self) -> int:
        """The off-policy update step's own draws (SAC's sampled actions)."""
        return self.learner(0) + 2

    def episode(self, index: int) -> int:
        """Episode `index` of an evaluation or a recording: reset with `root + index`, so
        results do not depend on how many episodes run side by side."""
        return (self.root or 0) + index

    def seat_order(self, player: int) -> int:
        """The games (and torch's sampling) of an arena evaluation with the evaluated policy
        in seat `player`."""
        return (self.root or 0) + player

    def arena_chunk(self, *, player: int, chunk: int) -> int:
        """Chunk `chunk` of the games with the evaluated policy in seat `player` (an arena
        plays at most a few thousand games at once); chunk 0 is `seat_order(player)`."""
        return self.seat_order(player) + chunk * ARENA_CHUNK_STRIDE

    def arena_actions(self) -> int:
        """The agents' action draws in an arena game, whose core takes the root itself."""
        return (self.root or 0) + 1

    def seating(self, index: int) -> int:
        """The games of round-robin seating `index`."""
        return (self.root or 0) + index * SEATING_STRIDE

    def league(self) -> int:
        """The league's matchmaking generator."""
        return self.root or 0

    def runner_plan(self, *, worker: int, version: int) -> list[int]:
        """Entropy of env runner `worker`'s league plan `version`: every runner and every plan
        draws its own reproducible stream (`numpy.random.default_rng(entropy)`)."""
        return [self.root or 0, worker, version]


def seed_for_copy(env_config: Mapping[str, Any]) -> int | None:
    """`env_config["seed"]` spread to this env copy: `env_config` may be RLlib's EnvContext,
    whose `worker_index` and `vector_index` name the copy (a plain dict is the driver's)."""
    seed = env_config.get(SEED_KEY)
    worker = int(getattr(env_config, "worker_index", 0) or 0)
    vector = int(getattr(env_config, "vector_index", 0) or 0)
    return SeedTree(None if seed is None else int(seed)).env_copy(worker=worker, vector=vector)
