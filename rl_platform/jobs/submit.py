"""Submit an experiment spec as a Ray job that runs `rlp train` on the cluster.

The working folder is uploaded as the job's `working_dir`, so the spec path is sent relative to
it and resolves the same way on the cluster as it does here.
"""

import re
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loguru import logger

from rl_platform.base.errors import UserError
from rl_platform.jobs.entrypoint import build_entrypoint
from rl_platform.jobs.errors import SubmitError
from rl_platform.jobs.runtime_env import build_runtime_env
from rl_platform.ray_runtime.ray_internals import quiet_working_dir_packaging
from rl_platform.spec import load_spec
from rl_platform.storage.ray_working_dir import SUBMIT_WITHOUT_OUT
from rl_platform.storage.run_manifest import JOB_ID_ENV_VAR
from rl_platform.utils.secrets import mask_secrets

if TYPE_CHECKING:
    from ray.job_submission import JobSubmissionClient

# Right after a head starts, the job API answers before its job agent has registered; the
# server then refuses submissions with this message and creates nothing.
_AGENT_NOT_READY = "No available agent"
AGENT_WAIT_S = 60.0
JOB_ID = re.compile(r"^[A-Za-z0-9_\-]{1,128}$")
"""Submission ids go into the job API's URL paths: Ray's own alphabet only."""


@dataclass(frozen=True)
class Submission:
    job_id: str
    entrypoint: str
    runtime_env: dict[str, Any]

    def shown_runtime_env(self) -> dict[str, Any]:
        """The runtime env with secret values masked, for anything printed or logged."""
        return mask_secrets(self.runtime_env)


def spec_relative_to(spec: Path, working_dir: Path) -> str:
    """`spec` as a POSIX path relative to `working_dir`, which is what the cluster sees."""
    resolved = spec.resolve() if spec.is_absolute() else (Path.cwd() / spec).resolve()
    if not resolved.is_file():
        raise SubmitError(f"spec {spec} does not exist or is not a file")
    try:
        return resolved.relative_to(working_dir.resolve()).as_posix()
    except ValueError:
        raise SubmitError(
            f"spec {spec} is outside the working folder {working_dir}: only that folder is "
            "uploaded to the cluster, so move the spec into it"
        ) from None


def submit_spec(
    *,
    client: "JobSubmissionClient",
    spec: Path,
    overrides: Sequence[str] = (),
    profile: str | None = None,
    out: str | None = None,
    seeds: str | None = None,
    name: str | None = None,
    working_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Submission:
    """Upload `working_dir` (default: the current folder) and start `rlp train` on the cluster;
    `seeds` is `rlp train --seeds` (one job, the seeds as Tune trials on the cluster); `name`
    goes into the job id (`rlp_NAME_1a2b3c4d`)."""
    # Fixed across retries, so a retry can never start the job twice.
    submission_id = new_submission_id(name)
    working_dir = (working_dir or Path.cwd()).resolve()
    spec_arg = spec_relative_to(spec, working_dir)
    entrypoint = build_entrypoint(
        spec_arg, overrides=overrides, profile=profile, out=out, seeds=seeds
    )
    if out is None and not spec_sets_storage(spec, overrides=overrides, profile=profile):
        logger.warning(SUBMIT_WITHOUT_OUT)  # the run would land where Ray deletes it
    runtime_env = build_runtime_env(working_dir=working_dir, environ=environ)
    # Every process of the job sees its id: runs stored on `logging.storage` record it, so
    # `rlp pull JOB_ID --from STORAGE` finds them.
    runtime_env["env_vars"][JOB_ID_ENV_VAR] = submission_id
    job_id = _submit_when_agent_ready(
        client,
        entrypoint=entrypoint,
        runtime_env=runtime_env,
        metadata={"rlp_spec": spec_arg, "rlp_profile": profile or "", "rlp_name": name or ""},
        submission_id=submission_id,
    )
    submission = Submission(job_id=job_id, entrypoint=entrypoint, runtime_env=runtime_env)
    logger.info("submitted job {} with runtime env {}", job_id, submission.shown_runtime_env())
    return submission


def spec_sets_storage(spec: Path, *, overrides: Sequence[str], profile: str | None) -> bool:
    """Whether the spec, as the job will load it, sets `logging.storage`; False when it does
    not load here (an env only the cluster has): the warning is then the safe side."""
    try:
        return (
            load_spec(spec, overrides=list(overrides), profile=profile).logging.storage is not None
        )
    except UserError:
        return False


def new_submission_id(name: str | None) -> str:
    """`rlp_<16 hex>`, or `rlp_NAME_<8 hex>` for a named job (`rlp submit --name`)."""
    if name is None:
        return f"rlp_{secrets.token_hex(8)}"
    job_id = f"rlp_{name}_{secrets.token_hex(4)}"
    if not JOB_ID.fullmatch(job_id):
        raise SubmitError(
            f"--name {name!r}: use up to 115 letters, digits, '_' and '-' (it becomes part of "
            "the job id)"
        )
    return job_id


def _submit_when_agent_ready(
    client: "JobSubmissionClient", *, wait_s: float = AGENT_WAIT_S, **job: Any
) -> str:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with quiet_working_dir_packaging():
                return client.submit_job(**job)
        except RuntimeError as exc:
            if _AGENT_NOT_READY not in str(exc) or time.monotonic() > deadline:
                raise
            logger.info("the cluster's job agent is not ready yet; retrying")
            time.sleep(2)
