"""`rlp search SPEC` and `rlp search --resume DIR`: a Tune ASHA search with a live trial table.

Registered in `rl_platform/cli.py` with `app.command("search")(search_command)`.
The spec is validated before Ray is imported, so a bad spec fails in a second with exit code 2.
"""

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from rl_platform.base.errors import UserError
from rl_platform.commands.error_boundary import INTERRUPTED_EXIT, user_errors
from rl_platform.commands.options import DashboardOpt, VerboseOpt
from rl_platform.utils.console_log import show_source_on_console
from rl_platform.utils.consoles import say, stderr_console

# The tuner imports Ray, and the spec schema (which `search.results` and `search.table` import)
# costs ~0.5 s: `rlp --help` and the other commands must not wait for either.
if TYPE_CHECKING:
    from rl_platform.search.tuner import SearchOutcome
    from rl_platform.spec import ExperimentSpec


SpecArg = Annotated[
    Path | None, typer.Argument(help="Spec YAML with a `search:` block.", show_default=False)
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", "-s", help="Override a spec value: --set search.num_samples=4."),
]
ProfileOpt = Annotated[
    str | None, typer.Option("--profile", "-p", help="Budget profile; shrinks every trial.")
]
OutOpt = Annotated[
    Path, typer.Option("--out", help="Parent folder: the search goes to OUT/search/NAME/TIME.")
]
ResumeOpt = Annotated[
    Path | None, typer.Option("--resume", help="Continue the interrupted search in this folder.")
]
LiveOpt = Annotated[bool, typer.Option("--live/--no-live", help="Show the live trial table.")]


def _load(spec: Path, overrides: list[str], profile: str | None) -> "ExperimentSpec":
    from rl_platform.search.budget import trial_budget
    from rl_platform.spec import load_spec

    loaded = load_spec(spec, overrides=overrides, profile=profile)
    trial_budget(loaded, source=str(spec))  # every search problem before Ray starts
    return loaded


@user_errors
def search_command(
    spec: SpecArg = None,
    set_: SetOpt = None,
    profile: ProfileOpt = None,
    out: OutOpt = Path("runs"),
    resume: ResumeOpt = None,
    live: LiveOpt = True,
    dashboard: DashboardOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Search hyperparameters with Ray Tune (ASHA) over the spec's `search:` block."""
    if verbose:
        show_source_on_console()
    if (spec is None) == (resume is None):
        raise UserError("pass a SPEC to start a search, or --resume DIR to continue one")
    if resume is not None and (set_ or profile):
        raise UserError("--set/--profile shape a new search; a resumed one reruns its spec.yaml")
    from rl_platform.commands.trial_table import trial_table
    from rl_platform.search.folder import saved_spec

    loaded = _load(spec, set_ or [], profile) if spec else saved_spec(resume)
    assert loaded.search is not None
    # Our table replaces Tune's console output (the legacy reporter at verbose=0 prints nothing),
    # and Tune's advice about frequent state snapshots (cheap on local disk) would tear it.
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    os.environ.setdefault("TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S", "0")
    table = trial_table(
        console=stderr_console,
        param_paths=list(loaded.search.params),
        metric=loaded.search.scheduler.metric,
    )
    from rl_platform.search.tuner import resume_search, run_search

    with table if live else contextlib.nullcontext():
        observer = table.update if live else None
        if resume is not None:
            outcome = resume_search(resume, observer=observer, dashboard=dashboard)
        else:
            outcome = run_search(loaded, out_dir=out, observer=observer, dashboard=dashboard)
    _summary(outcome)


def _summary(outcome: "SearchOutcome") -> None:
    from rl_platform.search.results import FINISHED

    say(f"search folder: {outcome.search_dir}")
    say(f"results: {outcome.search_dir / 'results.csv'}")
    if outcome.interrupted:
        unfinished = sum(1 for row in outcome.rows if row.status not in FINISHED)
        stderr_console.print(
            f"[yellow]interrupted[/]: {unfinished} of {len(outcome.rows)} trials unfinished; "
            f"continue with `rlp search --resume {escape(str(outcome.search_dir))}`",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(code=INTERRUPTED_EXIT)
    best = outcome.best
    if best is None:
        raise UserError("no trial finished healthy (see results.csv); no best.yaml written")
    say(f"best: {best.headline()}")  # one line, whatever its length: its values are copied
    say(f"train it: rlp train {outcome.best_yaml}")
