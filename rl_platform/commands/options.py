"""Options that several `rlp` verbs share, declared once so their flags match across verbs
(`--set`/`--profile`: `rlp validate`, `rlp train`, `rlp submit`; `--dashboard` and
`--verbose`: `rlp train`, `rlp search`; `--seed`: `rlp eval`, `rlp run`, `rlp watch`,
`rlp record`)."""

from typing import Annotated

import typer

from rl_platform.utils.seed_bounds import SEED_LIMIT

SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        help="Override a spec value: --set training.lr=1e-3 (repeatable); --set '~a.b' removes "
        "a key, e.g. a profile's custom resources.",
    ),
]
ProfileOpt = Annotated[
    str | None, typer.Option("--profile", "-p", help="Apply a named budget profile, e.g. smoke.")
]
DashboardOpt = Annotated[
    bool,
    typer.Option(
        "--dashboard",
        help="Start the local Ray with its dashboard on 127.0.0.1 and print its URL.",
    ),
]
SeedOpt = Annotated[
    int,
    typer.Option(min=0, max=SEED_LIMIT - 1, help="Episode i is reset with seed + i (< 2**32)."),
]
VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        help="Console log lines also name their level and source (module:function:line), as "
        "the run's train.log does, and debug lines show.",
    ),
]
