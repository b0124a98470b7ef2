"""Writing into a stopped run's league from outside the run (`rlp league tournament`,
`rlp league add`): the league under the run's lock, and a checkpoint's policy added as a
frozen member once it is known to fit.

A run that trains writes `league.json` every iteration from the league it holds in memory, so
a change made beside it would be overwritten: the run's lock (`RunLock`) is held from reading
the league to its last write, and a run that holds it refuses the edit with one line.
"""

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.base.seed_tree import SeedTree
from rl_platform.league.fit import check_fits, check_same_setup
from rl_platform.league.league import League
from rl_platform.league.members import Member
from rl_platform.league.view import league_root, league_run_spec
from rl_platform.storage.layout import CHECKPOINTS_DIR
from rl_platform.storage.run_dir import refuse_links
from rl_platform.storage.run_lock import LOCK_FILE, RunFolderBusyError, RunLock


@contextlib.contextmanager
def writing_league(run_dir: Path, *, verb: str) -> Iterator[tuple[League, Any]]:
    """(the run's league, its spec) to write into, under the run's lock; refused while the run
    trains, and for a run folder with a link inside."""
    root = league_root(run_dir)
    refuse_links(run_dir)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(RunLock(run_dir))
        except RunFolderBusyError as exc:
            raise UserError(
                f"rlp league {verb}: {run_dir} is training (process {exc.holder} holds its "
                f"{LOCK_FILE}) and writes its league every iteration; stop it (Ctrl+C or "
                f"SIGTERM saves a checkpoint), run `rlp league {verb}` again, then "
                f"`rlp train --resume {run_dir}`"
            ) from None
        spec = league_run_spec(run_dir)
        yield League(spec=spec.league, storage=root, seed=SeedTree(spec.seed).league()), spec


def has_checkpoint(run_dir: Path) -> bool:
    return _latest_checkpoint(run_dir) is not None


def _latest_checkpoint(run_dir: Path) -> Path | None:
    from rl_platform.storage.checkpoints import CheckpointStore

    return CheckpointStore(run_dir / CHECKPOINTS_DIR).latest()


def add_checkpoint_member(
    run_dir: Path, checkpoint: Path, *, member_id: str, module: str = MAIN_MODULE_ID
) -> tuple[Member, int]:
    """Add `module` of a training checkpoint to the run's league as a frozen member; (the
    member, its tensor count)."""
    from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
    from rl_platform.storage.checkpoints import load_checkpoint, resolve_checkpoint

    loaded = load_checkpoint(resolve_checkpoint(checkpoint))
    modules = module_weights(loaded.parts[ALGORITHM_PART])
    if module not in modules:
        raise UserError(f"{loaded.path} has no module {module!r}; it has {sorted(modules)}")
    weights = modules[module]
    with writing_league(run_dir, verb="add") as (league, spec):
        reference = _reference_weights(run_dir, league)
        if reference is None:
            check_same_setup(loaded.path, source_spec(loaded.path), spec)
        check_fits(weights, reference=reference, what=str(loaded.path))
        meta = {"source": str(loaded.path.resolve()), "module": module}
        member = league.add_checkpoint(member_id=member_id, weights=weights, metadata=meta)
    return member, len(weights)


def _reference_weights(run_dir: Path, league: League) -> dict[str, Any] | None:
    """Weights in this league's architecture: main's latest checkpoint, else any stored
    member (snapshots and added checkpoints all load into main's slots); None if neither."""
    latest = _latest_weights(run_dir, MAIN_MODULE_ID)
    if latest is not None:
        return latest
    stored = next((m.id for m in league.pool.members if m.is_frozen), None)
    return None if stored is None else league.pool.load_weights(stored)


def _latest_weights(run_dir: Path, module_id: str) -> dict[str, Any] | None:
    """`module_id`'s weights in the run's latest checkpoint, None without checkpoints."""
    from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
    from rl_platform.storage.checkpoints import load_checkpoint

    latest = _latest_checkpoint(run_dir)
    if latest is None:
        return None
    return module_weights(load_checkpoint(latest).parts[ALGORITHM_PART]).get(module_id)


def source_spec(source: Path) -> Any | None:
    """The spec of the run a checkpoint came from; None when none is beside it."""
    from rl_platform.policies.rebuild import run_dir_of
    from rl_platform.storage.saved_spec import read_saved_spec

    try:
        return read_saved_spec(run_dir_of(source))
    except UserError:
        return None
