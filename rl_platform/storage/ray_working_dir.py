"""Ray's unpacked copy of a job's working folder, where a run folder does not last.

`rlp submit` (and `ray job submit --working-dir .`) unpack the working folder on the head under
`<ray temp>/session_*/runtime_resources/working_dir_files/_ray_pkg_<hash>/` and start the job
there, so a run without `--out` or `logging.storage` trains into `runs/` of that copy. Ray
deletes the copy once no job uses it (and with the session), and the run with it: `rlp submit`
says so before it sends the job, and the run says so again in its first lines.
"""

from itertools import pairwise
from pathlib import Path

RUNTIME_RESOURCES = "runtime_resources"
WORKING_DIR_FILES = "working_dir_files"
KEEP_HINT = (
    "pass --out s3://bucket/runs (or gs://..., or a folder that lasts, e.g. "
    "--out /home/ubuntu/runs) or set logging.storage to keep it"
)


def in_ray_working_dir(path: str | Path) -> bool:
    """Whether `path` lies in Ray's unpacked copy of a job's working folder."""
    parts = Path(path).resolve().parts
    return (RUNTIME_RESOURCES, WORKING_DIR_FILES) in pairwise(parts)


def temporary_run_line(run_dir: Path) -> str:
    """The warning for a run folder in Ray's copy of the working folder."""
    return (
        f"this run folder is in Ray's unpacked copy of the job's working folder ({run_dir}), "
        f"which Ray deletes once the job is over: {KEEP_HINT}"
    )


SUBMIT_WITHOUT_OUT = (
    "without --out the run folder is written into Ray's unpacked copy of this folder on the "
    f"head, which Ray deletes once the job is over: {KEEP_HINT}"
)
