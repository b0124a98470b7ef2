"""A run's league as `rlp league show` prints it, read without writing anything (safe while
the run trains): the leaderboard and, when the run's spec is beside the league, the opponent
mix in effect now, computed by the matchmaker training uses (`Matchmaker.for_spec`), and the
schedule's phases."""

from dataclasses import asdict
from pathlib import Path
from typing import Any

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.league.leaderboard import leaderboard
from rl_platform.league.matchmaking import Matchmaker
from rl_platform.league.pool import MANIFEST, LeaguePool
from rl_platform.league.results import ResultBook
from rl_platform.league.state import check_saved_state
from rl_platform.spec.league import LeagueSpec
from rl_platform.spec.mix_schedule import phases_of
from rl_platform.storage.layout import LEAGUE_DIR, SPEC_FILE
from rl_platform.storage.saved_spec import has_saved_spec, read_saved_spec


def league_root(run_dir: Path) -> Path:
    """The run's league folder; refused when it holds no league."""
    root = run_dir / LEAGUE_DIR
    if not (root / MANIFEST).exists():  # one that is not a file: `LeaguePool.open` says so
        raise UserError(f"{run_dir} has no league ({root / MANIFEST} not found)")
    return root


def league_run_spec(run_dir: Path) -> Any:
    """The run's saved spec (an `ExperimentSpec`); refused when it has no league section."""
    spec = read_saved_spec(run_dir)
    if spec.league is None:
        raise UserError(f"{run_dir / SPEC_FILE} has no league section")
    return spec


def league_view(run_dir: Path) -> dict[str, Any]:
    """The leaderboard, and the mix and schedule when the run's spec is there, as plain data."""
    pool, state = LeaguePool.open(league_root(run_dir))  # read-only: no pruning
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
    spec = league_run_spec(run_dir).league
    matchmaker = Matchmaker.for_spec(spec, env_steps=env_steps)
    view["opponent_mix"] = matchmaker.mix_in_effect(
        lambda opponent: book.win_prob(MAIN_MODULE_ID, opponent)
    )
    view["schedule"] = _schedule(spec, env_steps)
    return view


def _schedule(spec: LeagueSpec, env_steps: int) -> dict[str, Any] | None:
    """The schedule's phases, the current one marked; None for a fixed mix."""
    phases = phases_of(spec.opponent_mix)
    if len(phases) < 2:
        return None
    current = max(i for i, p in enumerate(phases) if p.from_env_steps <= env_steps)
    return {
        "interpolation": spec.mix_interpolation,
        "phases": [
            {"from_env_steps": p.from_env_steps, "mix": p.mix, "current": i == current}
            for i, p in enumerate(phases)
        ],
    }
