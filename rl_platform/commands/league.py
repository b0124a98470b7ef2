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

import contextlib
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.base.seed_tree import SeedTree
from rl_platform.commands.error_boundary import user_errors
from rl_platform.ray_runtime.logs import ray_notices_logged
from rl_platform.storage.layout import CHECKPOINTS_DIR, LEAGUE_DIR, SPEC_FILE
from rl_platform.storage.run_lock import LOCK_FILE, RunFolderBusyError, RunLock
from rl_platform.utils.seed_bounds import SEED_LIMIT

league_app = typer.Typer(
    name="league", help="Show, extend and evaluate a run's self-play league.", no_args_is_help=True
)
console = Console()
err = Console(stderr=True)

RunDirArg = Annotated[Path, typer.Argument(help="Run folder of a league training run.")]


def _league_root(run_dir: Path) -> Path:
    from rl_platform.league.pool import MANIFEST

    root = run_dir / LEAGUE_DIR
    if not (root / MANIFEST).exists():  # one that is not a file: `LeaguePool.open` says so
        raise UserError(f"{run_dir} has no league ({root / MANIFEST} not found)")
    return root


def _run_spec(run_dir: Path) -> Any:
    from rl_platform.storage.saved_spec import read_saved_spec

    spec = read_saved_spec(run_dir)
    if spec.league is None:
        raise UserError(f"{run_dir / SPEC_FILE} has no league section")
    return spec


@contextlib.contextmanager
def _writing_league(run_dir: Path, *, verb: str) -> Iterator[tuple[Any, Any]]:
    """The run's league to write into, under the run's lock (`RunLock`) from reading it to the
    last write. A run that trains writes `league.json` every iteration from the league it holds
    in memory, so a change made beside it would be overwritten: refused while the run trains.
    A run folder with a link inside is refused too."""
    from rl_platform.league.league import League
    from rl_platform.storage.run_dir import refuse_links

    root = _league_root(run_dir)
    refuse_links(run_dir)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(RunLock(run_dir))
        except RunFolderBusyError as exc:
            raise UserError(
                f"rlp league {verb}: {run_dir} is training (process {exc.holder} holds its "
                f"{LOCK_FILE}) and writes its league every iteration; stop it (Ctrl+C or "
                f"SIGTERM saves a checkpoint), run `rlp league {verb}` again, then "
                f"`rlp train --resume {run_dir}`"
            ) from None
        spec = _run_spec(run_dir)
        yield League(spec=spec.league, storage=root, seed=SeedTree(spec.seed).league()), spec


def _has_checkpoint(run_dir: Path) -> bool:
    from rl_platform.storage.checkpoints import CheckpointStore

    return CheckpointStore(run_dir / CHECKPOINTS_DIR).latest() is not None


def _latest_weights(run_dir: Path, module_id: str) -> dict[str, Any] | None:
    """`module_id`'s weights in the run's latest checkpoint, None without checkpoints."""
    from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
    from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint

    latest = CheckpointStore(run_dir / CHECKPOINTS_DIR).latest()
    if latest is None:
        return None
    return module_weights(load_checkpoint(latest).parts[ALGORITHM_PART]).get(module_id)


@league_app.command("show")
@user_errors
def show(
    run_dir: RunDirArg,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object on stdout.")
    ] = False,
) -> None:
    """Leaderboard: rank, id, kind, rating (mu - 3 sigma), games, win rate vs main."""
    view = _league_view(run_dir)
    if as_json:
        sys.stdout.write(json.dumps(view, indent=2) + "\n")
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
    console.print(table)
    if view["opponent_mix"] is not None:
        _print_mix(view)


def _league_view(run_dir: Path) -> dict[str, Any]:
    """What `show` prints, as plain data: the leaderboard and, when the run's spec is beside
    the league, the opponent mix now and the schedule's phases."""
    from rl_platform.league.leaderboard import leaderboard
    from rl_platform.league.matchmaking import mix_with_pfsp
    from rl_platform.league.pool import MANIFEST, LeaguePool
    from rl_platform.league.results import ResultBook
    from rl_platform.league.state import check_saved_state
    from rl_platform.spec.mix_schedule import phases_of
    from rl_platform.storage.saved_spec import has_saved_spec

    pool, state = LeaguePool.open(_league_root(run_dir))  # read-only: no pruning
    check_saved_state(state, where=f"{pool.storage.uri}/{MANIFEST}")
    results = state.get("results", {})
    book = ResultBook.from_dict(results, window=int(results.get("window", 100)))
    env_steps = int(state.get("env_steps", 0))
    view: dict[str, Any] = {
        "run": run_dir.name,
        "iteration": state.get("iteration", 0),
        "env_steps": env_steps,
        "leaderboard": [asdict(row) for row in leaderboard(pool.members, results=book)],
        "opponent_mix": None,
        "schedule": None,
    }
    if not has_saved_spec(run_dir):  # a league folder copied without its run: no mix
        return view
    spec = _run_spec(run_dir).league
    # With `mix_pfsp`, the shares main's saved windows give the scripted keys now.
    view["opponent_mix"] = mix_with_pfsp(
        spec.mix_at(env_steps),
        lambda opponent: book.win_prob(MAIN_MODULE_ID, opponent),
        share=spec.mix_pfsp,
        weighting=spec.pfsp_weighting,
        p=spec.pfsp_p,
    )
    phases = phases_of(spec.opponent_mix)
    if len(phases) > 1:
        current = max(i for i, p in enumerate(phases) if p.from_env_steps <= env_steps)
        view["schedule"] = {
            "interpolation": spec.mix_interpolation,
            "phases": [
                {"from_env_steps": p.from_env_steps, "mix": p.mix, "current": i == current}
                for i, p in enumerate(phases)
            ],
        }
    return view


def _print_mix(view: dict[str, Any]) -> None:
    """The opponent mix in effect now and, for a schedule, its phases (`>` marks the current)."""

    def shares(mix: dict[str, float]) -> str:
        total = sum(mix.values())
        return ", ".join(f"{k} {w / total:.0%}" for k, w in mix.items() if w > 0)

    console.print(
        f"opponent mix at {view['env_steps']:,} env steps: {shares(view['opponent_mix'])}"
    )
    schedule = view["schedule"]
    if schedule is None:
        return
    console.print(f"schedule ({schedule['interpolation']}):")
    for phase in schedule["phases"]:
        mark = ">" if phase["current"] else " "
        console.print(
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
    with _writing_league(run_dir, verb="tournament") as (league, spec):
        ids = tournament_ids(league.pool, members, has_checkpoint=_has_checkpoint(run_dir))
        target = EnvTarget(spec.env.id, tuple(spec.env.wrappers), dict(spec.env.kwargs))
        visitors = guest_labels(guests or [], member_ids=league.pool.ids)
        with ray_notices_logged():  # RLlib's notices while modules are built: to the log file
            players = member_policies(run_dir, ids, target=target, guests=visitors)
            err.print(f"{len(players)} players, {games} games per pair: {', '.join(players)}")
            report = play_round_robin(players, target=target, games=games, seed=seed)
        guest_records = apply_ratings(league.pool, report.results, guests=list(visitors))
        # The heat map first: if it cannot be written, league.json keeps its ratings.
        write_heatmap(report.matrix, png, title=f"{spec.name}: {games} games/pair")
        league.save()
        write_json_atomic(
            run_dir / LEAGUE_DIR / "tournament.json",
            {"games_per_pair": games, **report.matrix.to_dict()},
        )
    err.print(f"{len(report.results)} games; heat map {png}")
    show(run_dir, as_json=False)
    _print_guests(guest_records, visitors)


def _print_guests(records: dict[str, Any], uris: dict[str, str]) -> None:
    """One line per guest of a tournament: its rating and record (guests are not stored)."""
    for label, record in records.items():
        err.print(
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
    from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
    from rl_platform.storage.checkpoints import load_checkpoint, resolve_checkpoint

    loaded = load_checkpoint(resolve_checkpoint(checkpoint))
    modules = module_weights(loaded.parts[ALGORITHM_PART])
    if module not in modules:
        raise UserError(f"{loaded.path} has no module {module!r}; it has {sorted(modules)}")
    weights = modules[module]
    with _writing_league(run_dir, verb="add") as (league, spec):
        reference = _reference_weights(run_dir, league)
        if reference is None:
            _check_same_setup(loaded.path, spec)
        _check_fits(weights, reference=reference, what=str(loaded.path))
        meta = {"source": str(loaded.path.resolve()), "module": module}
        member = league.add_checkpoint(member_id=member_id, weights=weights, metadata=meta)
    err.print(f"added {member.id} ({len(weights)} tensors) to {run_dir / LEAGUE_DIR}")


def _reference_weights(run_dir: Path, league: Any) -> dict[str, Any] | None:
    """Weights in this league's architecture: main's latest checkpoint, else any stored
    member (snapshots and added checkpoints all load into main's slots); None if neither."""
    latest = _latest_weights(run_dir, MAIN_MODULE_ID)
    if latest is not None:
        return latest
    stored = next((m.id for m in league.pool.members if m.is_frozen), None)
    return None if stored is None else league.pool.load_weights(stored)


def _check_same_setup(source: Path, spec: Any) -> None:
    """Without weights to compare shapes with, the source's own run spec must name this
    league's env and model; a checkpoint with neither cannot be checked and is refused."""
    from rl_platform.policies.rebuild import run_dir_of
    from rl_platform.storage.saved_spec import read_saved_spec

    try:
        source_spec = read_saved_spec(run_dir_of(source))
    except UserError:
        raise UserError(
            f"{source}: cannot check that it fits this league (the league has no checkpoint or "
            "stored member yet, and no spec.yaml is beside the checkpoint); add it after the "
            "league run's first checkpoint"
        ) from None
    if source_spec.env.id != spec.env.id:
        raise UserError(
            f"{source} was trained on {source_spec.env.id}; this league plays {spec.env.id}"
        )
    if source_spec.model != spec.model:
        raise UserError(
            f"{source}: its model ({source_spec.model.type}) differs from this league's "
            f"({spec.model.type}); train it with the same `model:` block"
        )


def _check_fits(weights: dict[str, Any], *, reference: dict[str, Any] | None, what: str) -> None:
    """Slots load new members into main's architecture: names and shapes must match."""
    if reference is None:
        return
    shapes = {k: tuple(v.shape) for k, v in weights.items()}
    expected = {k: tuple(v.shape) for k, v in reference.items()}
    if shapes != expected:
        differing = sorted(
            k for k in set(shapes) | set(expected) if shapes.get(k) != expected.get(k)
        )
        raise UserError(
            f"{what}: weights do not fit this league's model (differing tensors: "
            f"{differing[:5]}{'...' if len(differing) > 5 else ''}); train it with the same model"
        )
