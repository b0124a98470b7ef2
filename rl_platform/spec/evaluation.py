"""The `evaluation:` block: evaluate the trained policy while training (pure schema).

```yaml
evaluation:
  every_env_steps: 50000
  episodes: 100
  opponents: [based, constant]     # two-player envs; empty: the env's strongest scripted agent
  modes: [greedy, sampled]
stop: {eval: {greedy/win_rate/based: 0.9}}
```

Logs `eval/<mode>/win_rate/<opponent>`, `eval/<mode>/return_mean` (and per opponent
`eval/<mode>/return_mean/<opponent>`), `perf/eval_s`; writes `evaluation.jsonl` and keeps the
best evaluated checkpoint (`best_metric`) as `best` besides `latest`.
"""

import re
from typing import Literal

from pydantic import Field, field_validator

from rl_platform.spec.base import Integer, PositiveInt, SpecModel
from rl_platform.utils.seed_bounds import SEED_LIMIT

EvalMode = Literal["greedy", "sampled"]
_STOP_KEY = re.compile(
    r"(greedy|sampled)/(return_mean(/[A-Za-z0-9._+-]+)?|win_rate/[A-Za-z0-9._+-]+)"
)


class EvaluationSpec(SpecModel):
    """Evaluation during training (docs/training.md, "Evaluation during training")."""

    every_env_steps: PositiveInt
    """Evaluate once this many env steps have passed since the last evaluation."""
    episodes: PositiveInt = 100
    """Episodes per mode and opponent."""
    opponents: list[str] = []
    """Two-player envs: scripted agent names (`based`) or policy URIs; empty: the env's
    strongest scripted agent. Must be empty for single-agent envs."""
    modes: list[EvalMode] = Field(default=["greedy"], min_length=1)
    """`greedy` (argmax, what a deployed policy does) and/or `sampled` (as in training)."""
    seat: Literal["first", "second", "alternate"] = "alternate"
    """Two-player envs: the trained policy's seat; `alternate` is fair when moving first helps."""
    parallel: PositiveInt = 16
    """Env copies stepped together."""
    max_steps: PositiveInt | None = None
    """Cut episodes after this many env steps."""
    seed: Integer = Field(default=10_000, ge=0, lt=SEED_LIMIT)
    """Seed of the evaluation episodes (the same episodes at every evaluation), < 2**32."""
    best_metric: str | None = None
    """`eval/...` key whose highest value marks `best`; None: the first mode's win rate vs the
    first opponent (two-player envs) or its return mean."""

    @field_validator("modes")
    @classmethod
    def _distinct(cls, modes: list[str]) -> list[str]:
        if len(set(modes)) != len(modes):
            raise ValueError(f"modes listed more than once: {modes}")
        return modes


def check_eval_stop_key(key: str) -> str:
    """`greedy/win_rate/based`, `sampled/return_mean`, ...: the part after `eval/`."""
    if not _STOP_KEY.fullmatch(key):
        raise ValueError(
            f"stop.eval key {key!r} is not an evaluation metric; use <mode>/win_rate/<opponent> "
            "or <mode>/return_mean, e.g. greedy/win_rate/based"
        )
    return key
