"""Run folders: `<out>/<name>/<YYYYmmdd-HHMMSS>/` with spec.yaml, metrics, checkpoints, logs."""

import contextlib
import functools
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from loguru import logger

from rl_platform.base.errors import UserError
from rl_platform.storage.layout import LOG_FILE, SPEC_FILE
from rl_platform.storage.run_lock import LOCK_FILE
from rl_platform.storage.saved_spec import has_saved_spec
from rl_platform.utils.atomic import remove_directory
from rl_platform.utils.names import safe_join
from rl_platform.utils.secrets import mask_log_record


def new_run_dir(out_dir: str | Path, name: str) -> Path:
    """A fresh folder for this run; a same-second collision gets a numeric suffix."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = safe_join(Path(out_dir), name)
    for suffix in ["", *(f"-{i}" for i in range(1, 100))]:
        candidate = base / f"{stamp}{suffix}"
        try:
            candidate.mkdir(parents=True, exist_ok=False)
            return candidate
        except FileExistsError:
            continue
    raise UserError(f"{base}: could not create a unique run folder")


@contextlib.contextmanager
def removed_if_nothing_written(run_dir: Path) -> Iterator[None]:
    """A new run folder whose start fails while it holds nothing but its `.lock` (and an empty
    log), e.g. on a full disk, is removed: a failed start leaves no folder that looks like a
    run and holds nothing to resume or read. A folder with anything more in it stays."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            entries = list(run_dir.iterdir())
            if all(p.name in (LOCK_FILE, LOG_FILE) and _empty_file(p) for p in entries):
                remove_directory(run_dir)
        raise


def _empty_file(path: Path) -> bool:
    return not path.is_symlink() and path.is_file() and path.stat().st_size == 0


def existing_run_dir(path: str | Path) -> Path:
    """A run folder to resume: it has its spec, and no symbolic link anywhere inside it."""
    run_dir = Path(path)
    if not has_saved_spec(run_dir):
        raise UserError(
            f"--resume {run_dir}: not a run folder (no {SPEC_FILE}); "
            "pass the folder that `rlp train` created"
        )
    refuse_links(run_dir)
    return run_dir


WANDB_DIR = "wandb"
"""W&B's folder in a run (`logging.wandb`), written by the W&B library."""


def refuse_links(run_dir: Path) -> None:
    """A run folder is shared and pulled from buckets: a link inside it that leads out of it
    (`.lock`, `train.log`, `metrics.jsonl`, a checkpoint folder) would make a resume write or
    read outside the run, so such a link is refused, naming it. Links that stay inside are
    left alone, and so is what W&B keeps under `wandb/` (its `latest-run`, and debug logs
    linked to W&B's own cache): W&B writes there, never `rlp`, and a resume starts a new W&B
    run folder beside the old ones (the `wandb` folder itself must not be a link out). A
    search folder (`rlp search --resume`) is checked the same way, its trials' runs included."""
    inside = run_dir.resolve()
    for root, dirs, files in os.walk(run_dir, followlinks=False):
        # W&B's folders (the run's, or each trial's run in a search folder) are checked
        # themselves, not entered.
        wandb = [WANDB_DIR] if WANDB_DIR in dirs else []
        dirs[:] = [d for d in dirs if d != WANDB_DIR or (Path(root) / d).is_symlink()]
        entries = [*dirs, *files, *wandb]
        for name in dict.fromkeys(entries):
            path = Path(root) / name
            if path.is_symlink() and not path.resolve().is_relative_to(inside):
                raise UserError(
                    f"{path} is a symbolic link out of the run folder (to {os.readlink(path)}); "
                    "a run folder's files must be its own: replace the link with the file or "
                    "folder itself, or resume a copy of the run made with `cp -rL`"
                )


def add_file_log(run_dir: Path, *, secrets: Iterable[str] = ()) -> int:
    """The run's log file; known secret values, and `secrets` (the spec's), are masked in every
    message on every sink (`mask_log_record`): a path that holds one is logged masked too."""
    logger.configure(patcher=functools.partial(mask_log_record, known=frozenset(secrets)))
    return logger.add(run_dir / LOG_FILE, level="INFO", enqueue=False)
