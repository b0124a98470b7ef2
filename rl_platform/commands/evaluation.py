"""CLI edge of evaluation: `rlp eval | run | watch | plot | doctor | policies`.

Registered in `rl_platform/cli.py`; every command is wrapped in `error_boundary.user_errors`.
Results go to stdout (a rich table, or one JSON object with `--json`); progress, spinners and
notes go to stderr.
"""

import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from rl_platform.commands.error_boundary import FAILED_EXIT, positive_finite, user_errors
from rl_platform.commands.options import SeedOpt
from rl_platform.commands.output import JsonOpt, write_json
from rl_platform.evaluation.progress import episode_progress, status
from rl_platform.ray_runtime.logs import ray_notices_logged
from rl_platform.utils.console_text import shown
from rl_platform.utils.consoles import stderr_console, stdout_console

EnvOpt = Annotated[
    str | None,
    typer.Option(
        "--env", "-e", help="Env id (CartPole-v1, rlp/Duel-v0), alias (duel, cartpole, "
        "connect_four) or spec YAML. Default: the env a checkpoint was trained on.",
    ),
]  # fmt: skip
EpisodesOpt = Annotated[int, typer.Option("--episodes", "-n", min=1, help="Episodes to play.")]
SampleOpt = Annotated[
    bool, typer.Option("--sample", help="Sample actions instead of the greedy (argmax) action.")
]
OpponentOpt = Annotated[
    str | None,
    typer.Option(help="Two-player envs: the opponent's policy URI (default: scripted best)."),
]
MaxStepsOpt = Annotated[
    int | None, typer.Option("--max-steps", min=1, help="Cut episodes after this many env steps.")
]
SeatOpt = Annotated[
    str,
    typer.Option(
        help="Two-player envs: the policy's seat, first, second or alternate (by episode)."
    ),
]
ParallelOpt = Annotated[
    int, typer.Option(min=1, help="Env copies stepped together (batched actions).")
]
PolicyArg = Annotated[
    str,
    typer.Argument(help="checkpoint://RUN, scripted://ENV/NAME, league://RUN/ID or random."),
]


def _fmt(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items()) or "-"
    return shown(value)


_LABELS = {"reward_components": "reward_components (unweighted sums)"}
"""Table labels that say more than the JSON key: an env's components are summed before its
reward weights (docs/evaluation.md), so a duel's `time_penalty` reads -1,151 beside a return
near 0, and the label says why."""


def _table(title: str, rows: dict[str, Any]) -> Table:
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("metric", style="bold")
    table.add_column("value")
    for key, value in rows.items():
        table.add_row(_LABELS.get(key, key), _fmt(value))
    return table


@user_errors
def eval_command(
    policy: PolicyArg,
    env: EnvOpt = None,
    episodes: EpisodesOpt = 10,
    seed: SeedOpt = 0,
    opponent: OpponentOpt = None,
    sample: SampleOpt = False,
    max_steps: MaxStepsOpt = None,
    parallel: ParallelOpt = 8,
    seat: SeatOpt = "first",
    as_json: JsonOpt = False,
) -> None:
    """Evaluate a policy: return mean/std/min/max, episode length, win rate, reward components."""
    from rl_platform.evaluation.eval import evaluate

    with ray_notices_logged(), episode_progress(episodes, f"eval {policy}") as progress:
        result = evaluate(
            policy=policy, env=env, episodes=episodes, seed=seed, opponent=opponent,
            sample=sample, parallel=parallel, max_steps=max_steps, on_episode=progress, seat=seat,
            on_games_done=progress.reached,
        )  # fmt: skip
    if as_json:
        write_json(result)
        return
    stdout_console.print(_table(f"{result['policy']} on {result['env']}", result))


@user_errors
def run_command(
    policy: Annotated[
        list[str],
        typer.Option("--policy", "-p", help="URI[,proportion=P] (repeatable; P defaults to 1)."),
    ],
    env: EnvOpt = None,
    episodes: EpisodesOpt = 10,
    seed: SeedOpt = 0,
    sample: SampleOpt = False,
    max_steps: MaxStepsOpt = None,
    parallel: ParallelOpt = 8,
    as_json: JsonOpt = False,
) -> None:
    """Play several policies sharing an env's agents by proportion; results per policy."""
    from rl_platform.evaluation.multi import run_policies

    with ray_notices_logged(), episode_progress(episodes, "run") as advance:
        result = run_policies(
            policies=policy, env=env, episodes=episodes, seed=seed, sample=sample,
            parallel=parallel, max_steps=max_steps, on_episode=advance,
        )  # fmt: skip
    if as_json:
        write_json(result)
        return
    for row in result["policies"]:
        row = dict(row)
        title = f"{row.pop('policy')} on {result['env']} ({result['episodes']} episodes)"
        for other, record in row.pop("vs", {}).items():
            row[f"vs {other}"] = record
        stdout_console.print(_table(title, row))


def _text_sink(*, paced: bool) -> Any:
    def show(frame: str, fps: float) -> None:
        if paced:
            sys.stdout.write("\x1b[H\x1b[2J" + frame + "\n")  # home + clear: redraw in place
            sys.stdout.flush()
            time.sleep(1.0 / fps)
        else:
            sys.stdout.write(frame + "\n\n")

    return show


@user_errors
def watch_command(
    policy: PolicyArg,
    env: EnvOpt = None,
    episodes: EpisodesOpt = 1,
    out: Annotated[Path | None, typer.Option(help="Write a .gif or .mp4 file.")] = None,
    text: Annotated[bool, typer.Option("--text", help="Draw the duel in the terminal.")] = False,
    fps: Annotated[
        float | None,
        typer.Option(callback=positive_finite, help="Frames per second (default: real time)."),
    ] = None,
    scale: Annotated[
        int | None,
        typer.Option(min=1, help="Integer upscaling (default: frames >= 480 px wide)."),
    ] = None,
    max_steps: MaxStepsOpt = None,
    max_frames: Annotated[int, typer.Option(min=1, help="Stop after this many frames.")] = 3000,
    seed: SeedOpt = 0,
    opponent: OpponentOpt = None,
    sample: SampleOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Render a policy's episodes to a GIF/MP4 (rgb_array) or as text in the terminal."""
    from rl_platform.base.errors import UserError
    from rl_platform.evaluation.watch import watch

    if text and as_json:
        raise UserError("--text draws on stdout; it cannot be combined with --json")
    on_text = _text_sink(paced=sys.stdout.isatty()) if text else None
    # The spinner would fight with the frames drawn on the same terminal in --text mode.
    with ray_notices_logged(), nullcontext() if text else status(f"rendering {policy}"):
        result = watch(
            policy=policy, env=env, episodes=episodes, seed=seed, out=out, on_text=on_text,
            fps=fps, max_steps=max_steps, max_frames=max_frames, scale=scale, opponent=opponent,
            sample=sample,
        )  # fmt: skip
    if as_json:
        write_json(result)
    video = result["video"]
    if video is not None:
        stderr_console.print(
            f"wrote {video['path']} ({video['frames']} frames, {video['width']}x{video['height']}, "
            f"{result['fps']:g} fps)", highlight=False,
        )  # fmt: skip


@user_errors
def plot_command(
    runs: Annotated[
        list[Path] | None, typer.Argument(help="Run folders (or folders holding run folders).")
    ] = None,
    metric: Annotated[str, typer.Option(help="metrics.jsonl key.")] = "train/episode_return_mean",
    out: Annotated[Path, typer.Option(help="Output image (.png, .svg, .pdf).")] = Path(
        "curves.png"
    ),
    band: Annotated[
        str,
        typer.Option(help="Band across runs of a spec: minmax, std or ci (95% bootstrap)."),
    ] = "minmax",
    league: Annotated[
        Path | None, typer.Option(help="Plot this league run's ratings over time instead.")
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option(
            help="Published points to draw beside the curves, FILE.json:KEY, e.g. "
            "benchmarks/reference_curves.json:Hopper-v5/PPO."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Learning curves over env steps (mean and band across seeds of a spec), or league ratings."""
    from rl_platform.base.errors import UserError
    from rl_platform.evaluation.plot import BAND_NAMES, plot_league, plot_runs
    from rl_platform.evaluation.reference_points import parse_reference

    if band not in BAND_NAMES:
        raise UserError(f"--band {band!r}: use {', '.join(BAND_NAMES)}")
    if league is not None:
        if reference:
            raise UserError("--reference draws beside learning curves, not league ratings")
        if runs:
            raise UserError("pass run folders or --league RUN_DIR, not both")
        result = plot_league(league, out=out)
    elif not runs:
        raise UserError("pass at least one run folder (or --league RUN_DIR)")
    else:
        chosen = parse_reference(reference) if reference else None
        result = plot_runs(runs, metric=metric, out=out, band=band, reference=chosen)  # type: ignore[arg-type]
    if as_json:
        write_json(result)
    stderr_console.print(f"wrote {result['out']}", highlight=False)


@user_errors
def doctor_command(
    strict: Annotated[bool, typer.Option(help="Exit 1 if any check fails.")] = False,
    skip: Annotated[
        list[str] | None,
        typer.Option(help="Skip a check (python, ray, torch, atari, mujoco, wandb, auth)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check Python, Ray, torch/CUDA, Atari ROMs, MuJoCo rendering, W&B and Ray token auth."""
    from rl_platform.base.errors import UserError
    from rl_platform.evaluation.doctor import CHECK_NAMES, Status, run_checks

    unknown = sorted(set(skip or []) - set(CHECK_NAMES))
    if unknown:
        raise UserError(f"--skip {unknown}: known checks are {', '.join(CHECK_NAMES)}")
    with status("checking"):
        checks = run_checks(skip=frozenset(skip or []))
    if as_json:
        write_json([{**c.__dict__, "status": c.status.value} for c in checks])
    else:
        style = {Status.OK: "green", Status.WARN: "yellow", Status.FAIL: "bold red"}
        table = Table(title="rlp doctor", title_justify="left")
        for column in ("check", "status", "found", "fix"):
            table.add_column(column, overflow="fold")
        for c in checks:
            table.add_row(c.name, f"[{style[c.status]}]{c.status.value}[/]", c.detail, c.fix)
        stdout_console.print(table)
    if strict and any(c.status == Status.FAIL for c in checks):
        raise typer.Exit(code=FAILED_EXIT)


@user_errors
def policies_command(as_json: JsonOpt = False) -> None:
    """List the scripted policies (scripted://ENV/NAME) with what they do."""
    from rl_platform.teachers import scripted_policies

    entries = scripted_policies()
    if as_json:
        write_json([{"uri": e.uri, "env": e.env_id, "description": e.description} for e in entries])
        return
    table = Table(title="scripted policies (also: random, checkpoint://RUN, league://RUN/ID)")
    table.add_column("uri", no_wrap=True)
    table.add_column("env", no_wrap=True)
    table.add_column("description", overflow="fold")
    for entry in entries:
        table.add_row(entry.uri, entry.env_id, entry.description)
    stdout_console.print(table)
