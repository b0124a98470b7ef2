"""`rlp league ...`: inspect and extend a training run's self-play league (never starts Ray).

The main CLI registers this with `app.add_typer(league_app, name="league")`.

* `show RUN_DIR [--json]`: the leaderboard (read-only; safe while training runs).
* `tournament RUN_DIR --games N`: round robin between members on CPU, updates ratings and
  writes `league/tournament.png` + `league/tournament.json`.
* `add RUN_DIR CHECKPOINT --id NAME`: add a checkpoint's policy as a frozen member.

`tournament` and `add` write the league under the run's lock (`RunLock`, one writer per run
folder): while the run trains they are refused with one line; stop it, run them, then resume
training with `rlp train --resume RUN_DIR`, which keeps added members.
"""

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.commands.error_boundary import user_errors
from rl_platform.commands.output import JsonOpt, write_json
from rl_platform.ray_runtime.logs import ray_notices_logged
from rl_platform.storage.layout import LEAGUE_DIR
from rl_platform.utils.consoles import stderr_console, stdout_console
from rl_platform.utils.seed_bounds import SEED_LIMIT

league_app = typer.Typer(
    name="league", help="Show, extend and evaluate a run's self-play league.", no_args_is_help=True
)
RunDirArg = Annotated[Path, typer.Argument(help="Run folder of a league training run.")]


@league_app.command("show")
@user_errors
def show(
    run_dir: RunDirArg,
    as_json: JsonOpt = False,
) -> None:
    """Leaderboard: rank, id, kind, rating (mu - 3 sigma), games, win rate vs main."""
    from rl_platform.league.view import league_view

    view = league_view(run_dir)
    if as_json:
        write_json(view)
        return
    table = Table(title=f"league of {view['run']} (iteration {view['iteration']})")
    for column in ("rank", "id", "kind", "rating", "games", "win rate vs main"):
        table.add_column(column, justify="left" if column in ("id", "kind") else "right")
    for row in view["leaderboard"]:
        rate = "-" if row["win_rate_vs_main"] is None else f"{row['win_rate_vs_main']:.1%}"
        if row["win_rate_vs_main"] is not None:
            rate += f" ({row['games_vs_main']})"
        table.add_row(
            str(row["rank"]),
            row["id"],
            row["kind"],
            f"{row['rating']:.2f}",
            str(row["games"]),
            rate,
        )
    stdout_console.print(table)
    if view["opponent_mix"] is not None:
        _print_mix(view)


def _print_mix(view: dict[str, Any]) -> None:
    """The opponent mix in effect now and, for a schedule, its phases (`>` marks the current)."""

    def shares(mix: dict[str, float]) -> str:
        total = sum(mix.values())
        return ", ".join(f"{k} {w / total:.0%}" for k, w in mix.items() if w > 0)

    stdout_console.print(
        f"opponent mix at {view['env_steps']:,} env steps: {shares(view['opponent_mix'])}"
    )
    schedule = view["schedule"]
    if schedule is None:
        return
    stdout_console.print(f"schedule ({schedule['interpolation']}):")
    for phase in schedule["phases"]:
        mark = ">" if phase["current"] else " "
        stdout_console.print(
            f" {mark} from {phase['from_env_steps']:>12,} env steps: {shares(phase['mix'])}"
        )


@league_app.command("tournament")
@user_errors
def tournament(
    run_dir: RunDirArg,
    games: Annotated[int, typer.Option(min=1, help="Games per pair (seats alternate).")] = 10,
    seed: Annotated[
        int,
        typer.Option(
            min=0, max=SEED_LIMIT - 1, help="Seed of the games and the policies' sampling."
        ),
    ] = 0,
    members: Annotated[
        list[str] | None, typer.Option("--member", "-m", help="Only these ids (repeatable).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Heat map PNG (default league/tournament.png).")
    ] = None,
    guests: Annotated[
        list[str] | None,
        typer.Option(
            "--guest",
            help="A policy from outside the league (policy://FILE, checkpoint://RUN, "
            "scripted://...), rated beside the members, not stored (repeatable).",
        ),
    ] = None,
) -> None:
    """Round robin between pool members, update ratings, write a matchup heat map."""
    from rl_platform.evaluation.envs import EnvTarget
    from rl_platform.tournament.heatmap import check_figure_path, write_heatmap
    from rl_platform.tournament.league_edit import has_checkpoint, writing_league
    from rl_platform.tournament.tournament import (
        apply_ratings,
        guest_labels,
        member_policies,
        play_round_robin,
        tournament_ids,
    )
    from rl_platform.utils.atomic import write_json_atomic

    png = out or run_dir / LEAGUE_DIR / "tournament.png"
    check_figure_path(png, option="--out")  # before any game: a bad path fails in a second
    with writing_league(run_dir, verb="tournament") as (league, spec):
        ids = tournament_ids(league.pool, members, has_checkpoint=has_checkpoint(run_dir))
        target = EnvTarget(spec.env.id, tuple(spec.env.wrappers), dict(spec.env.kwargs))
        visitors = guest_labels(guests or [], member_ids=league.pool.ids)
        with ray_notices_logged():  # RLlib's notices while modules are built: to the log file
            players = member_policies(run_dir, ids, target=target, guests=visitors)
            stderr_console.print(
                f"{len(players)} players, {games} games per pair: {', '.join(players)}"
            )
            report = play_round_robin(players, target=target, games=games, seed=seed)
        guest_records = apply_ratings(league.pool, report.results, guests=list(visitors))
        # The heat map first: if it cannot be written, league.json keeps its ratings.
        write_heatmap(report.matrix, png, title=f"{spec.name}: {games} games/pair")
        league.save()
        write_json_atomic(
            run_dir / LEAGUE_DIR / "tournament.json",
            {"games_per_pair": games, **report.matrix.to_dict()},
        )
    stderr_console.print(f"{len(report.results)} games; heat map {png}")
    show(run_dir, as_json=False)
    _print_guests(guest_records, visitors)


def _print_guests(records: dict[str, Any], uris: dict[str, str]) -> None:
    """One line per guest of a tournament: its rating and record (guests are not stored)."""
    for label, record in records.items():
        stderr_console.print(
            f"{label} ({uris[label]}): rating {record.ordinal:.2f} "
            f"(mu {record.mu:.2f}, sigma {record.sigma:.2f}), {record.wins} wins, "
            f"{record.draws} draws, {record.losses} losses of {record.games}",
            highlight=False,
            soft_wrap=True,
        )


@league_app.command("add")
@user_errors
def add(
    run_dir: RunDirArg,
    checkpoint: Annotated[
        Path, typer.Argument(help="`rlp train` checkpoint folder (iter_NNNNNN).")
    ],
    member_id: Annotated[str, typer.Option("--id", help="New member id (letters, digits, ._-).")],
    module: Annotated[str, typer.Option(help="Module id inside the checkpoint.")] = MAIN_MODULE_ID,
) -> None:
    """Add a checkpoint's policy to the league as a frozen `checkpoint` member."""
    from rl_platform.tournament.league_edit import add_checkpoint_member

    member, tensors = add_checkpoint_member(run_dir, checkpoint, member_id=member_id, module=module)
    stderr_console.print(f"added {member.id} ({tensors} tensors) to {run_dir / LEAGUE_DIR}")
