"""Which env runner a spec gets: `env.runner: auto | vector | rllib` (pure, no Ray).

The array runner needs a game with a vectorized core (`PlatformEnv.vector_game`), an
on-policy algorithm whose learner reads episodes through the default PPO-family learner
connectors, and no env wrappers (they wrap RLlib's per-env copies). Every model type runs on
it: recurrent states and the opponent-history window live in the runner's arrays.
"""

from dataclasses import dataclass
from typing import Literal

from rl_platform.envs.env_info import EnvFacts

VECTOR_ALGOS = ("PPO", "APPO", "IMPALA")


@dataclass(frozen=True)
class RunnerChoice:
    kind: Literal["vector", "rllib"]
    reason: str


def _blocker(*, env: EnvFacts, algo: str, wrappers: list[str]) -> str | None:
    """Why the array runner cannot run this spec, or None if it can."""
    if env.kind != "vector_game":
        return f"env {env.env_id!r} has no vectorized multi-agent game core"
    if algo not in VECTOR_ALGOS:
        return f"algo {algo} is not one of {', '.join(VECTOR_ALGOS)}"
    if wrappers:
        return f"env.wrappers {wrappers} apply to RLlib's per-env copies"
    return None


def choose_runner(*, requested: str, env: EnvFacts, algo: str, wrappers: list[str]) -> RunnerChoice:
    """Resolve `env.runner` for the env's facts (`EnvSpec.facts()`); raises ValueError when
    `vector` is asked for and impossible."""
    blocker = _blocker(env=env, algo=algo, wrappers=wrappers)
    if requested == "rllib":
        return RunnerChoice("rllib", "env.runner: rllib")
    if blocker is None:
        return RunnerChoice("vector", f"{env.env_id} has a vectorized game core")
    if requested == "vector":
        raise ValueError(
            f"env.runner vector cannot run this spec: {blocker}; use env.runner auto or rllib"
        )
    return RunnerChoice("rllib", blocker)
