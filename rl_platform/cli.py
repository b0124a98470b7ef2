"""The `rlp` command line: parse arguments, load the spec, call a run_* function. Nothing else.

User errors (`UserError`) are shown as plain lines with exit code 2 by `error_boundary.user_errors`,
which decorates every command where it is defined.
Each command imports what it needs inside its function: Ray and torch only where a command
trains, evaluates or talks to a cluster, the spec schema only where it reads a spec, so `rlp
--help` and `rlp envs` start in under half a second and `rlp validate` without Ray or torch
(docs/training.md, "Start-up"; tests/unit/test_cli_imports.py keeps it so).
"""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from rl_platform.base.errors import UserError
from rl_platform.commands import bc as bc_cli
from rl_platform.commands import evaluation as evaluation_cli
from rl_platform.commands.error_boundary import (
    FAILED_EXIT,
    INTERRUPTED_EXIT,
    secrets_masked,
    user_errors,
)
from rl_platform.commands.jobs import jobs_app, submit_command
from rl_platform.commands.league import league_app
from rl_platform.commands.options import DashboardOpt, ProfileOpt, SetOpt, VerboseOpt
from rl_platform.commands.output import JsonOpt, write_json
from rl_platform.commands.search import search_command
from rl_platform.multi_seed.selection import parse_seeds
from rl_platform.storage.layout import RUNS_DIR
from rl_platform.utils.console_log import show_source_on_console
from rl_platform.utils.consoles import say, stderr_console

if TYPE_CHECKING:
    from rl_platform.spec import ExperimentSpec

app = typer.Typer(
    name="rlp",
    help="rl_platform: experiments as files on RLlib's new API stack.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(jobs_app, name="jobs")
app.add_typer(league_app, name="league")

SpecArg = Annotated[Path, typer.Argument(help="Experiment spec YAML file.", show_default=False)]

app.command("submit", help="Submit `rlp train SPEC` to a Ray cluster as a job.")(submit_command)
app.command("record")(bc_cli.record_command)
app.command("search")(search_command)
app.command("eval")(evaluation_cli.eval_command)
app.command("run")(evaluation_cli.run_command)
app.command("watch")(evaluation_cli.watch_command)
app.command("plot")(evaluation_cli.plot_command)
app.command("doctor")(evaluation_cli.doctor_command)
app.command("policies")(evaluation_cli.policies_command)


@app.command()
@user_errors
def validate(
    spec: SpecArg,
    set_: SetOpt = None,
    profile: ProfileOpt = None,
    cluster: Annotated[
        Path | None,
        typer.Option(
            help="Cluster launcher YAML or KubeRay manifest (cluster/aws-gpu.yaml): warn when "
            "the spec's resources fit none of its node types."
        ),
    ] = None,
) -> None:
    """Validate a spec and print it fully resolved (includes, profile, overrides applied)."""
    from rl_platform.capacity.fit import fit_warnings
    from rl_platform.capacity.node_types import read_node_types
    from rl_platform.spec import load_spec
    from rl_platform.utils.safe_yaml import dump_yaml
    from rl_platform.utils.secrets import mask_secrets

    resolved = load_spec(spec, overrides=set_ or [], profile=profile)
    node_types = read_node_types(cluster) if cluster is not None else None
    sys.stdout.write(dump_yaml(mask_secrets(resolved.dump())))
    if node_types is not None:
        for line in fit_warnings(resolved.resources, node_types, source=str(cluster)):
            stderr_console.print(
                f"[yellow]warning:[/] {escape(line)}", highlight=False, soft_wrap=True
            )


@app.command()
@user_errors
def train(
    spec: SpecArg,
    set_: SetOpt = None,
    profile: ProfileOpt = None,
    resume: Annotated[
        Path | None,
        typer.Option(help="Continue the run in this run folder from its latest checkpoint."),
    ] = None,
    out: Annotated[
        str,
        typer.Option(
            help="Parent folder for run folders, or storage for them (s3://bucket/runs, "
            "gs://..., file:///...): the run folder is then written under runs/ and stored "
            "there too (logging.storage)."
        ),
    ] = RUNS_DIR,
    force: Annotated[
        bool,
        typer.Option(help="With --resume: continue from a checkpoint saved while collapsed."),
    ] = False,
    seeds: Annotated[
        str | None,
        typer.Option(
            help="Train several seeds as one experiment: a count (3: the spec's seed, +1, +2) "
            "or a list (0,4,7); run folders under OUT/seeds/NAME/TIME, aggregate beside them."
        ),
    ] = None,
    dashboard: DashboardOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Train an experiment with an embedded local Ray (or the cluster in RAY_ADDRESS)."""
    from rl_platform.spec import load_spec

    if verbose:
        show_source_on_console()

    if seeds is not None and resume is not None:
        raise UserError(
            "--seeds starts a new experiment; continue one of its seeds with "
            "`rlp train PARENT/seed_N/spec.yaml --resume PARENT/seed_N`"
        )
    selection = parse_seeds(seeds) if seeds is not None else None
    # Validate before importing the training stack (Ray, torch): bad specs fail in well under 2 s.
    loaded = load_spec(spec, overrides=set_ or [], profile=profile)
    if selection is not None:
        _train_seeds(loaded, selection.resolve(loaded.seed), out=out, dashboard=dashboard)
        return
    from rl_platform.run.train import train as run_train
    from rl_platform.utils.secrets import mask_text, secret_values

    # Paths are shown masked as spec errors are: `--out` or a storage URI may hold a secret.
    secrets = secret_values(loaded.dump())
    # A TrainingHealthError leaves through `user_errors` with `TRAINING_STOPPED_EXIT`.
    with secrets_masked(secrets):
        result = run_train(loaded, out_dir=out, resume=resume, force=force, dashboard=dashboard)
    run_dir = mask_text(str(result.run_dir), secrets)
    if result.already_at_stop:
        line = (
            f"nothing to train: {run_dir} already reached its stop at iteration "
            f"{result.iterations} ({result.stop_reason}); raise `stop` to train on"
        )
        say(line)
        return
    say(f"run folder: {run_dir}")
    if result.stored_at is not None:
        stored_at = mask_text(result.stored_at, secrets)
        say(f"stored at: {stored_at}")
    if result.not_stored_at is not None:
        line = (
            f"not stored: the final upload to {mask_text(result.not_stored_at, secrets)} "
            "failed (the warnings above say why); the run is only in its run folder"
        )
        say(line)


def _train_seeds(spec: "ExperimentSpec", seeds: list[int], *, out: str, dashboard: bool) -> None:
    from rl_platform.multi_seed.summary import summary_line
    from rl_platform.multi_seed.tuner import run_seeds

    outcome = run_seeds(spec, seeds, out_dir=out, dashboard=dashboard)
    for line in (
        f"seeds folder: {outcome.parent}",
        f"trial_metrics {summary_line(outcome.summary)}",
    ):
        say(line)
    for seed, reason in outcome.failed.items():
        stderr_console.print(
            f"[bold red]seed {seed} failed:[/] {escape(reason)}", highlight=False, soft_wrap=True
        )
    if outcome.interrupted:
        stderr_console.print(
            "[yellow]interrupted[/]: each seed's folder keeps its last checkpoint; continue one "
            "with `rlp train PARENT/seed_N/spec.yaml --resume PARENT/seed_N`",
            highlight=False,
        )
        raise typer.Exit(code=INTERRUPTED_EXIT)
    if outcome.failed:
        raise typer.Exit(code=FAILED_EXIT)


@app.command()
@user_errors
def export(
    checkpoint: Annotated[
        Path, typer.Argument(help="Checkpoint folder or run folder (uses latest).")
    ],
    out: Annotated[Path, typer.Argument(help="Output .safetensors file.")],
    module: Annotated[str | None, typer.Option(help="Module id (default: the main one).")] = None,
    dtype: Annotated[str, typer.Option(help="Weights as fp32, or bf16 (half the file).")] = "fp32",
) -> None:
    """Write one policy to a safetensors file: its weights and the spec that rebuilds it
    (`rlp eval policy://FILE`)."""
    from rl_platform.run.export import export_policy

    if dtype not in ("fp32", "bf16"):
        raise UserError(f"--dtype {dtype!r}: expected fp32 or bf16")
    written = export_policy(checkpoint, out, module_id=module, dtype=dtype)
    extra = ", and the observation filter's statistics" if written.filtered else ""
    stderr_console.print(
        f"wrote {written.path} ({written.module_id}, {written.num_tensors} tensors{extra})"
    )


@app.command()
@user_errors
def pull(
    source: Annotated[
        str,
        typer.Argument(
            help="A run on storage (s3://bucket/runs/NAME/STAMP, a shared path) or, with "
            "--from, a job id (rlp_...) or NAME/STAMP.",
            show_default=False,
        ),
    ],
    from_: Annotated[
        str | None,
        typer.Option("--from", help="Storage the runs went to (logging.storage, --out)."),
    ] = None,
    to: Annotated[
        Path | None,
        typer.Option(
            help="Run folder to create (default runs/NAME/STAMP); a job's seeds: "
            "the folder to put them in."
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            help="Replace the run folder at --to (only a run folder: never a folder of runs, "
            "the storage, or a run that is training)."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Bring finished runs back from storage, every file checked against its sha256."""
    from rl_platform.storage.run_pull import pull_runs

    pulled = pull_runs(source, storage=from_, to=to, force=force)
    rows = [
        {
            "source": run.source,
            "dest": str(run.dest),
            "job_id": run.manifest.job_id,
            "final": run.manifest.final,
            "files": len(run.manifest.files),
            "bytes": run.size,
        }
        for run in pulled
    ]
    if as_json:
        write_json(rows)
        return
    for row in rows:
        state = "" if row["final"] else " (not ended at its last upload)"
        say(
            f"pulled {row['source']} -> {row['dest']}: {row['files']} files, "
            f"{row['bytes']:,} bytes, all verified{state}"
        )


@app.command()
@user_errors
def envs(
    as_json: JsonOpt = False,
) -> None:
    """List rl_platform's own env ids; any Gymnasium id, `package.module:ClassOrFactory` or
    PettingZoo module path works too (docs/envs.md)."""
    from rl_platform.envs.catalog import PLATFORM_ENVS

    rows = {env_id: entry.description for env_id, entry in PLATFORM_ENVS.items()}
    if as_json:
        write_json(rows)
        return
    for env_id, description in rows.items():
        sys.stdout.write(f"{env_id:32s} {description}\n")


def main() -> None:
    """The `rlp` console script: the app, then an exit without the interpreter's teardown
    (`rl_platform.ray_runtime.process_exit`; 2.5-3 s less after every training on 2 cores)."""
    from rl_platform.ray_runtime.process_exit import exit_code_of, exit_now
    from rl_platform.utils.console_log import use_console_log

    use_console_log()  # our lines as the run's own words, not loguru's default format
    try:
        app(prog_name="rlp")
    except SystemExit as ended:
        exit_now(exit_code_of(ended.code))


if __name__ == "__main__":  # pragma: no cover
    main()
