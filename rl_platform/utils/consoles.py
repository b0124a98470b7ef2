"""The two consoles everything the `rlp` commands print goes through: the result on stdout,
everything else (progress, spinners, notices, errors) on stderr, so that
`rlp eval ... --json | jq` reads the result alone. Each resolves `sys.stdout`/`sys.stderr` when
it prints, so a redirected or captured stream is followed."""

from rich.console import Console

stdout_console = Console()
stderr_console = Console(stderr=True)


def say(line: str) -> None:
    """`line` on stderr as it is: no markup or highlighting read into paths and ids, and
    wrapped by the terminal rather than split by rich (a split path cannot be copied)."""
    stderr_console.print(line, markup=False, highlight=False, soft_wrap=True)
