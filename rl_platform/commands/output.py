"""What a command's result looks like on stdout: a rich table or lines for people, or with
`--json` one JSON document (object or list) for scripts. Declared once, so every verb's flag,
help text and format match; the consoles are `rl_platform.utils.consoles`'."""

import json
import sys
from typing import Annotated, Any

import typer

JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json", help="Print the result as one JSON document on stdout (progress stays on stderr)."
    ),
]


def write_json(result: Any) -> None:
    """`result` as indented JSON on stdout; values JSON has no type for (paths, dates) as str."""
    sys.stdout.write(json.dumps(result, indent=2, default=str) + "\n")
    sys.stdout.flush()
