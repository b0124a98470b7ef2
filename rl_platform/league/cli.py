"""`rlp league ...`: inspect and extend a training run's self-play league (no Ray).

The main CLI registers this with `app.add_typer(league_app, name="league")`.

* `show RUN_DIR`: the leaderboard (read-only; safe while training runs).
* `tournament RUN_DIR --games N`: round robin between members on CPU, updates ratings and
  writes `league/tournament.png` + `league/tournament.json`.
* `add RUN_DIR CHECKPOINT --id NAME`: add a checkpoint's policy as a frozen member.

`tournament` and `add` write the league: run them while the run's training is stopped (one
writer per league folder), then resume training with `rlp train --resume RUN_DIR`.
"""

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rl_platform.errors import UserError
from rl_platform.module_ids import MAIN_MODULE_ID
from rl_platform.storage.layout import CHECKPOINTS_DIR, LEAGUE_DIR, SPEC_FILE

league_app = typer.Typer(
    name="league", help="Show, extend and evaluate a run's self-play league.", no_args_is_help=True
)
console = Console()
err = Console(stderr=True)

RunDirArg = Annotated[Path, typer.Argument(help="Run folder of a league training run.")]


def _user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Show `UserError`s as one line with their exit code (sub-apps are not wrapped by `rlp`)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except UserError as exc:
            err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(code=exc.exit_code) from None

    return wrapper


def _league_root(run_dir: Path) -> Path:
    root = run_dir / LEAGUE_DIR
    if not (root / "league.json").is_file():
        raise UserError(f"{run_dir} has no league ({root / 'league.json'} not found)")
    return root


def _run_spec(run_dir: Path) -> Any:
    from rl_platform.spec import load_spec

    spec = load_spec(run_dir / SPEC_FILE)
    if spec.league is None:
        raise UserError(f"{run_dir / SPEC_FILE} has no league section")
    return spec


def _open_league(run_dir: Path) -> tuple[Any, Any]:
    from rl_platform.league.league import League

    root = _league_root(run_dir)
    spec = _run_spec(run_dir)
    return League(spec=spec.league, storage=root, seed=spec.seed or 0), spec


def _latest_weights(run_dir: Path, module_id: str) -> dict[str, Any] | None:
    """`module_id`'s weights in the run's latest checkpoint, None without checkpoints."""
    from rl_platform.storage.algorithm_state import ALGORITHM_PART, module_weights
    from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint

    latest = CheckpointStore(run_dir / CHECKPOINTS_DIR).latest()
    if latest is None:
        return None
    return module_weights(load_checkpoint(latest).parts[ALGORITHM_PART]).get(module_id)


@league_app.command("show")
@_user_errors
def show(run_dir: RunDirArg) -> None:
    """Leaderboard: rank, id, kind, rating (mu - 3 sigma), games, win rate vs main."""
    from rl_platform.league.leaderboard import leaderboard
    from rl_platform.league.pool import LeaguePool
    from rl_platform.league.results import ResultBook

    pool, state = LeaguePool.open(_league_root(run_dir))  # read-only: no pruning
    results = state.get("results", {})
    book = ResultBook.from_dict(results, window=int(results.get("window", 100)))
    table = Table(title=f"league of {run_dir.name} (iteration {state.get('iteration', 0)})")
    for column in ("rank", "id", "kind", "rating", "games", "win rate vs main"):
        table.add_column(column, justify="left" if column in ("id", "kind") else "right")
    for row in leaderboard(pool.members, results=book):
        rate = "-" if row.win_rate_vs_main is None else f"{row.win_rate_vs_main:.1%}"
        if row.win_rate_vs_main is not None:
            rate += f" ({row.games_vs_main})"
        table.add_row(str(row.rank), row.id, row.kind, f"{row.rating:.2f}", str(row.games), rate)
    console.print(table)


@league_app.command("tournament")
@_user_errors
def tournament(
    run_dir: RunDirArg,
    games: Annotated[int, typer.Option(min=1, help="Games per pair (seats alternate).")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the games and the policies' sampling.")] = 0,
    members: Annotated[
        list[str] | None, typer.Option("--member", "-m", help="Only these ids (repeatable).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Heat map PNG (default league/tournament.png).")
    ] = None,
) -> None:
    """Round robin between pool members, update ratings, write a matchup heat map."""
    from rl_platform.league.scripted import DUEL_ENV
    from rl_platform.league.tournament import (
        apply_ratings,
        member_policies,
        play_round_robin,
        write_heatmap,
    )
    from rl_platform.utils.atomic import write_json_atomic

    league, spec = _open_league(run_dir)
    main_weights = _latest_weights(run_dir, "main")
    if spec.env.id == DUEL_ENV:
        players = member_policies(
            league.pool, model=spec.model, main_weights=main_weights, ids=members
        )
        err.print(f"{len(players)} players, {games} games per pair: {', '.join(players)}")
        report = play_round_robin(players, games=games, seed=seed, env_kwargs=spec.env.kwargs)
    else:
        report = _rollout_tournament(
            run_dir,
            spec,
            league.pool,
            members,
            has_main=main_weights is not None,
            games=games,
            seed=seed,
        )
    apply_ratings(league.pool, report.results)
    league.save()
    root = run_dir / LEAGUE_DIR
    png = write_heatmap(
        report.matrix, out or root / "tournament.png", title=f"{spec.name}: {games} games/pair"
    )
    write_json_atomic(
        root / "tournament.json", {"games_per_pair": games, **report.matrix.to_dict()}
    )
    err.print(f"{len(report.results)} games; heat map {png}")
    show(run_dir)


def _rollout_tournament(
    run_dir: Path,
    spec: Any,
    pool: Any,
    members: list[str] | None,
    *,
    has_main: bool,
    games: int,
    seed: int,
) -> Any:
    """Envs other than the duel: play through the evaluation rollout (rollout_tournament.py)."""
    from rl_platform.evaluation.envs import EnvTarget
    from rl_platform.league.members import MemberKind
    from rl_platform.league.rollout_tournament import (
        member_rollout_policies,
        play_rollout_round_robin,
    )

    ids = members or [
        m.id
        for m in pool.members
        if m.kind is MemberKind.SCRIPTED or m.is_frozen or (m.id == MAIN_MODULE_ID and has_main)
    ]
    target = EnvTarget(spec.env.id, tuple(spec.env.wrappers), dict(spec.env.kwargs))
    players = member_rollout_policies(run_dir, ids, target=target)
    err.print(f"{len(players)} players, {games} games per pair: {', '.join(players)}")
    return play_rollout_round_robin(players, target=target, games=games, seed=seed)


@league_app.command("add")
@_user_errors
def add(
    run_dir: RunDirArg,
    checkpoint: Annotated[
        Path, typer.Argument(help="`rlp train` checkpoint folder (iter_NNNNNN).")
    ],
    member_id: Annotated[str, typer.Option("--id", help="New member id (letters, digits, ._-).")],
    module: Annotated[str, typer.Option(help="Module id inside the checkpoint.")] = MAIN_MODULE_ID,
) -> None:
    """Add a checkpoint's policy to the league as a frozen `checkpoint` member."""
    from rl_platform.storage.algorithm_state import ALGORITHM_PART, module_weights
    from rl_platform.storage.checkpoints import load_checkpoint

    modules = module_weights(load_checkpoint(checkpoint).parts[ALGORITHM_PART])
    if module not in modules:
        raise UserError(f"{checkpoint} has no module {module!r}; it has {sorted(modules)}")
    weights = modules[module]
    league, _ = _open_league(run_dir)
    _check_fits(weights, reference=_latest_weights(run_dir, "main"), what=str(checkpoint))
    meta = {"source": str(checkpoint.resolve()), "module": module}
    member = league.add_checkpoint(member_id=member_id, weights=weights, metadata=meta)
    err.print(f"added {member.id} ({len(weights)} tensors) to {run_dir / LEAGUE_DIR}")


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
