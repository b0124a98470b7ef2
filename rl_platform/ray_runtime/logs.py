"""Ray's routine notices into a log file, off the console (no Ray import until used).

Ray gives three loggers their own console handler and stops them propagating: `ray`
(ray/_private/log.py), `ray.rllib` (ray/rllib/__init__.py) and `ray.data`. At INFO and WARNING
they print notices that ask nothing of a local user: token auth being on, working-dir packaging,
"You are running PPO on the new API stack!", the `RLModuleConfig` deprecation that RLlib's own
`RLModule.__init__` triggers when a stock module is built (ours take it first,
`modules/config_notice.py`), "Install gputil". At ERROR they print RLlib's and Tune's own
account of a failure, with the full traceback, before the one line that `rlp` prints for it
(a user's env that raises: "Environment step failed ... Traceback ...", then `error: env ...`).
While `ray_logs_to` is open all of them go to a log file (a run's
train.log; for the verbs without a run folder, `rlp eval`, `run`, `watch`, `league ...`, the
user's `notices_log()`) and none reaches the console: what ends a command is said by its own
line (`commands/error_boundary.py`), and a lost env runner by the training loop's warning. What
Ray's workers print and the GCS's notices are not log records: `worker_output.py` sends them
here too.
"""

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from rl_platform.utils.secrets import environment_secrets, mask_text

RAY_LOGGERS = ("ray", "ray.rllib", "ray.data")
_open_logs = 0
"""How many `ray_logs_to` are open (nested: a run inside a seeds study's trial)."""
_FORMAT = "%(asctime)s | %(levelname)-8s | %(name)s:%(lineno)d - %(message)s"


class _OffTheConsole(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


class _MaskedFormatter(logging.Formatter):
    """Ray's messages can quote runtime envs; known secret values never reach the file."""

    def format(self, record: logging.LogRecord) -> str:
        return mask_text(super().format(record), environment_secrets())


def _console_handlers() -> list[logging.Handler]:
    # Ray's session-log handlers (`ray.data`'s SessionFileHandler) keep everything.
    return [
        handler
        for name in RAY_LOGGERS
        for handler in logging.getLogger(name).handlers
        if isinstance(handler, logging.StreamHandler)
        and not isinstance(handler, logging.FileHandler)
    ]


@contextlib.contextmanager
def ray_logs_to(log_file: Path) -> Iterator[None]:
    """While open, Ray's log records go to `log_file` (secrets masked) and not to the console.
    Enter it before `ensure_ray`: `ray.init` logs the first notices."""
    # Importing `ray.data` and `ray.rllib` adds the console handlers that are filtered here.
    import ray
    import ray.data
    import ray.rllib  # noqa: F401

    off = _OffTheConsole()
    to_file = logging.FileHandler(log_file, encoding="utf-8")
    to_file.setFormatter(_MaskedFormatter(_FORMAT))
    consoles = _console_handlers()
    for handler in consoles:
        handler.addFilter(off)
    for name in RAY_LOGGERS:
        logging.getLogger(name).addHandler(to_file)
    global _open_logs
    _open_logs += 1
    try:
        yield
    finally:
        _open_logs -= 1
        for name in RAY_LOGGERS:
            logging.getLogger(name).removeHandler(to_file)
        for handler in consoles:
            handler.removeFilter(off)
        to_file.close()


def a_ray_log_is_open() -> bool:
    """Whether Ray's output goes to a log file now (`worker_output.py` asks from Ray's thread)."""
    return _open_logs > 0


def notices_log() -> Path:
    """Where the verbs without a run folder keep Ray's notices: `$RLP_LOG_DIR/rlp.log`, else
    `$XDG_CACHE_HOME/rl_platform/logs/rlp.log`, else `~/.cache/rl_platform/logs/rlp.log`."""
    explicit = os.environ.get("RLP_LOG_DIR")
    if explicit:
        return Path(explicit).expanduser() / "rlp.log"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "rl_platform" / "logs" / "rlp.log"


@contextlib.contextmanager
def ray_notices_logged() -> Iterator[None]:
    """`ray_logs_to(notices_log())`; where that folder cannot be written, the console keeps
    the notices rather than the command failing."""
    path = notices_log()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError:
        yield
        return
    with ray_logs_to(path):
        yield
