"""How many processes the kernel's out-of-memory killer has ended in this container (no Ray).

A process the kernel kills for memory gets a SIGKILL like any other: Ray only reports "the
worker died unexpectedly". The cgroup counts those kills (`oom_kill` in cgroup v2's
`memory.events`, cgroup v1's `memory.oom_control`); a count that rose while a run trained says
that a lost env runner was killed for memory.
"""

from pathlib import Path

OOM_KILL_FILES = (
    Path("/sys/fs/cgroup/memory.events"),
    Path("/sys/fs/cgroup/memory/memory.oom_control"),
)


def oom_kill_count(files: tuple[Path, ...] = OOM_KILL_FILES) -> int | None:
    """The cgroup's `oom_kill` counter; None where no cgroup file holds one."""
    for path in files:
        try:
            lines = path.read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
    return None
