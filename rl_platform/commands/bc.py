"""`rlp record TEACHER_URI --env ENV_ID --episodes N --out DIR` (registered in rl_platform/cli.py).

Writes the teacher's episodes in RLlib's offline format for `algo: BC` (docs/bc.md). Prints one
JSON summary on stdout.
"""

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from rl_platform.commands.error_boundary import user_errors
from rl_platform.commands.options import SeedOpt
from rl_platform.commands.output import write_json
from rl_platform.utils.names import require_utf8_start

TeacherArg = Annotated[
    str, typer.Argument(help="Teacher policy URI: scripted://ENV/NAME, checkpoint://RUN, ...")
]
EnvOpt = Annotated[str, typer.Option("--env", "-e", help="Single-agent env id, e.g. CartPole-v1.")]
EpisodesOpt = Annotated[int, typer.Option("--episodes", "-n", min=1, help="Episodes to record.")]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="New (or empty) output folder.")]
ParallelOpt = Annotated[
    int, typer.Option(min=1, help="Env copies played together (batched actions).")
]


@user_errors
def record_command(
    teacher: TeacherArg,
    env: EnvOpt,
    episodes: EpisodesOpt,
    out: OutOpt,
    seed: SeedOpt = 0,
    parallel: ParallelOpt = 8,
) -> None:
    """Record a teacher's episodes as parquet in RLlib's offline format (for `algo: BC`)."""
    from rl_platform.bc.record import record
    from rl_platform.ray_runtime.session import ensure_ray

    require_utf8_start(out)  # Ray cannot start in a folder, or from a command, not in UTF-8
    ensure_ray()
    summary = record(teacher, env_id=env, episodes=episodes, out=out, seed=seed, parallel=parallel)
    write_json(asdict(summary))
