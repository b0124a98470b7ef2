"""How `rlp`'s log records look on the console: the run's own words, not loguru's.

loguru's default sink prints `2026-12-07 15:05:42.345 | INFO     | rl_platform.run.progress:
update:77 - ...` on a terminal and in a job's log alike. The `rlp` console script
(`cli.main`) replaces it with `use_console_log`: a short time and the message, the level only
where it is not INFO (`15:05:42 warning: ...`, as the `error:` one-liners say it), and the
source (`module:function:line`) only under `--verbose` (`show_source_on_console`) and in a
run's `train.log`, whose sink keeps loguru's full format. A record bound with `OFF_CONSOLE`
goes to the files only: the progress line on a terminal, where a live display shows it.
A seed's Tune trial of `rlp train --seeds` prints the same lines labelled with its seed
(`15:05:42 seed 1 | ...`, `multi_seed/tuner.py`), which the driver passes on as they are.

The sink writes to `sys.stderr` as it is at each record, so stdout stays clean for `--json`,
and a rich live display that redirects stderr prints the line above itself.
"""

import contextlib
import sys

from loguru import logger

OFF_CONSOLE = "off_console"
"""`logger.bind(off_console=True)`: the record goes to the log files, not the console."""
_VERBOSE_FORMAT = "{level: <8} {name}:{function}:{line} - {message}\n{exception}"
_console = {"handler": None, "verbose": False, "label": ""}


def use_console_log(*, verbose: bool = False, label: str = "") -> None:
    """Replace loguru's default console sink (and any earlier one of ours) with ours;
    `verbose` also shows DEBUG records; `label` (`seed 1`) follows the time on every line."""
    _console.update(verbose=verbose, label=label)
    handler = _console["handler"]
    # Already removed: a caller that configures loguru itself.
    with contextlib.suppress(ValueError):
        logger.remove(0 if handler is None else handler)
    _console["handler"] = logger.add(
        _to_stderr,
        level="DEBUG" if verbose else "INFO",
        format=_format,
        filter=lambda record: not record["extra"].get(OFF_CONSOLE, False),
        colorize=False,
    )


def show_source_on_console() -> None:
    """`--verbose`: console lines also name the level and `module:function:line`, and DEBUG
    records show. Without our sink (the Python API, a test's CliRunner) loguru's own already
    shows both, and nothing changes."""
    if console_log_is_ours():
        use_console_log(verbose=True, label=_console["label"])


def console_log_is_ours() -> bool:
    """Whether `use_console_log` set the console up (the `rlp` script; not the Python API)."""
    return _console["handler"] is not None


def _to_stderr(message: str) -> None:
    sys.stderr.write(message)
    sys.stderr.flush()


def _format(record: dict) -> str:
    label = f"{_console['label']} | " if _console["label"] else ""
    if _console["verbose"]:
        return "{time:HH:mm:ss} " + label + _VERBOSE_FORMAT
    level = record["level"].name
    shown = "" if level in ("INFO", "SUCCESS") else f"{level.lower()}: "
    return "{time:HH:mm:ss} " + label + shown + "{message}\n{exception}"
