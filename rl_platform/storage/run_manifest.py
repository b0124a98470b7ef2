"""`manifest.json`: what storage holds of one run, written after every upload of it.

```
{"format": "rlp-run/1", "run": "cartpole_ppo/20261125-101010", "name": "cartpole_ppo",
 "job_id": "rlp_lr-1e-4_ba50e9f0", "final": true, "updated_at": 1795556854.5,
 "files": {"checkpoints/iter_000002/algorithm.safetensors": {"size": 71832, "sha256": "..."}}}
```

The uploader writes it after the files it lists (`rl_platform.storage.run_upload`), so a reader
that finds a manifest finds every file in it; no manifest means no upload has completed. `run`
is the run's key below the storage root (how `rlp pull` names its default destination), and
`job_id` the Ray job that trained it (`rlp pull JOB_ID --from STORAGE` looks for it).
Every path is checked component by component (`check_name`), so a hostile manifest can never
make `rlp pull` write outside its destination.
"""

import hashlib
import json
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from rl_platform.base.errors import IntegrityError, UnsafePathError
from rl_platform.utils.atomic import Readable
from rl_platform.utils.names import check_name

FORMAT = "rlp-run/1"
JOB_ID_ENV_VAR = "RLP_JOB_ID"
"""Set by `rlp submit` in the job's runtime env: every process of the job sees it."""
_RAY_JOB_ID_ENV_VAR = "RAY_JOB_SUBMISSION_ID"
# Ray's job supervisor hands the driver its job config, whose metadata holds the submission id
# (ray/dashboard/modules/job/job_supervisor.py, `_get_driver_env_vars`): jobs sent with plain
# `ray job submit -- rlp train ...` are found too.
_RAY_JOB_CONFIG_ENV_VAR = "RAY_JOB_CONFIG_JSON_ENV_VAR"
_RAY_JOB_ID_METADATA_KEY = "job_submission_id"


def path_parts(path: str) -> tuple[str, ...]:
    """`a/b/c` -> ("a", "b", "c"), each component a safe name (no '..', '/', hidden files)."""
    return tuple(check_name(part, what=f"path component of {path!r}") for part in path.split("/"))


def _relative_path(path: str) -> str:
    try:
        path_parts(path)
    except UnsafePathError as exc:  # pydantic reports ValueErrors as validation errors
        raise ValueError(str(exc)) from None
    return path


RelativePath = Annotated[str, AfterValidator(_relative_path)]


class FileEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    size: Annotated[int, Field(ge=0)]
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class RunManifest(BaseModel):
    """See the module docstring."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["rlp-run/1"] = FORMAT
    run: RelativePath
    """The run's key below the storage root: `NAME/STAMP`, `seeds/NAME/STAMP/seed_N`."""
    name: str
    """The experiment's name."""
    job_id: str | None = None
    """The Ray job that trained the run (`rlp submit`), if any."""
    final: bool = False
    """True after the upload at the end of the run; false while it trains."""
    updated_at: float
    """When this manifest was written (epoch seconds)."""
    files: dict[RelativePath, FileEntry]
    """Every file of the run on storage: path relative to the run -> size and sha256."""


def parse_manifest(data: bytes, *, source: str) -> RunManifest:
    """A manifest from its JSON bytes; anything else is an `IntegrityError` naming `source`."""
    try:
        return RunManifest.model_validate(json.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError, ValidationError) as exc:
        first = str(exc).strip().splitlines()
        detail = " ".join(first[:3])[:300]
        raise IntegrityError(f"{source}: not a run manifest ({detail})") from None


def manifest_bytes(manifest: RunManifest) -> bytes:
    return (json.dumps(manifest.model_dump(), indent=2, sort_keys=True) + "\n").encode("utf-8")


def current_job_id(environ: Mapping[str, str]) -> str | None:
    """The Ray job this process belongs to: `RLP_JOB_ID` (set by `rlp submit`),
    `RAY_JOB_SUBMISSION_ID`, else the submission id in Ray's job config; None outside a job."""
    for key in (JOB_ID_ENV_VAR, _RAY_JOB_ID_ENV_VAR):
        if environ.get(key):
            return environ[key]
    try:
        config = json.loads(environ.get(_RAY_JOB_CONFIG_ENV_VAR, "{}"))
        job_id = (config.get("metadata") or {}).get(_RAY_JOB_ID_METADATA_KEY)
    except (json.JSONDecodeError, AttributeError):
        return None
    return str(job_id) if job_id else None


class HashingReader:
    """Wraps a binary stream; counts and hashes the bytes read through it, so a manifest entry
    describes exactly the bytes that were copied, even if the file grew meanwhile."""

    def __init__(self, stream: Readable) -> None:
        self._stream = stream
        self._hash = hashlib.sha256()
        self.size = 0

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self._hash.update(data)
        self.size += len(data)
        return data

    def entry(self) -> FileEntry:
        return FileEntry(size=self.size, sha256=self._hash.hexdigest())
