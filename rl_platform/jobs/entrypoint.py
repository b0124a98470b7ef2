"""The shell command a Ray job runs:
`rlp train <spec> [--set k=v ...] [--profile P] [--out D] [--seeds S]`.

Ray's job supervisor hands the entrypoint to `/bin/sh -c`, so every piece the user supplied is
quoted with `shlex.join`: a spec path, override or profile such as `x; touch f` or `$(touch f)`
stays one literal argument and never runs.
"""

import shlex
from collections.abc import Sequence

from rl_platform.jobs.errors import SubmitError
from rl_platform.multi_seed.selection import parse_seeds

TRAIN_ARGV = ("rlp", "train")


def _check_arg(value: str, *, what: str) -> str:
    if "\x00" in value:
        raise SubmitError(f"{what} {value!r} contains a NUL byte, which no command line can carry")
    return value


def build_train_argv(
    spec: str,
    *,
    overrides: Sequence[str] = (),
    profile: str | None = None,
    out: str | None = None,
    seeds: str | None = None,
) -> list[str]:
    """The argument vector of the training command, before any quoting. `seeds` is checked
    here (`rlp train --seeds` syntax), so a typo fails before anything is uploaded."""
    spec = _check_arg(spec, what="spec path")
    # A relative path starting with '-' would be read as an option by the CLI on the cluster.
    argv = [*TRAIN_ARGV, f"./{spec}" if spec.startswith("-") else spec]
    for override in overrides:
        argv += ["--set", _check_arg(override, what="override")]
    if profile:
        argv += ["--profile", _check_arg(profile, what="profile")]
    if out:
        argv += ["--out", _check_arg(out, what="output folder")]
    if seeds is not None:
        parse_seeds(seeds)
        argv += ["--seeds", seeds]
    return argv


def build_entrypoint(
    spec: str,
    *,
    overrides: Sequence[str] = (),
    profile: str | None = None,
    out: str | None = None,
    seeds: str | None = None,
) -> str:
    """The entrypoint string for `JobSubmissionClient.submit_job`, safe to pass to a shell."""
    argv = build_train_argv(spec, overrides=overrides, profile=profile, out=out, seeds=seeds)
    return shlex.join(argv)
