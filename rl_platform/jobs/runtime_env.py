"""The runtime env of a submitted job: which files travel to the cluster and which env vars.

Ray 2.60 packages `working_dir` itself and already honours `.gitignore` and `.rayignore` files
(in every folder it walks; see `ray._private.runtime_env.packaging.get_excludes_from_ignore_files`),
so `.rayignore` needs no parsing here. The explicit excludes below still apply when a
`.gitignore` is missing or `RAY_RUNTIME_ENV_IGNORE_GITIGNORE=1` is set: run outputs, virtualenvs
and anything token-like must never be uploaded.
"""

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rl_platform.utils.secrets import is_secret_key
from rl_platform.utils.stop_grace import STOP_GRACE_ENV_VAR, stop_grace_s

EXCLUDES: tuple[str, ...] = (
    ".git",
    ".venv",
    ".env",
    "runs/",
    "checkpoints/",
    "wandb/",
    "*.token",
    "auth_token",
)

# Project settings that follow a job to the cluster. Keys that look secret stay behind: Ray keeps
# the runtime env in plain text and shows it to anyone who can list jobs.
FORWARDED_ENV_PREFIXES: tuple[str, ...] = ("RLP_", "WANDB_")

# Ray's job supervisor sends SIGTERM on `stop`, waits RAY_JOB_STOP_WAIT_TIME_S (default 3 s,
# an int), then SIGKILLs the whole process group. The training gets RLP_STOP_GRACE_S to write a
# final checkpoint; the margin covers Ray worker shutdown after that.
RAY_STOP_WAIT_ENV_VAR = "RAY_JOB_STOP_WAIT_TIME_S"
STOP_KILL_MARGIN_S = 15


def job_env_vars(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Env vars for the job: forwarded project settings plus the stop grace settings."""
    environ = os.environ if environ is None else environ
    env_vars = {
        key: value
        for key, value in environ.items()
        if key.startswith(FORWARDED_ENV_PREFIXES) and not is_secret_key(key)
    }
    grace = stop_grace_s(environ)
    env_vars[STOP_GRACE_ENV_VAR] = f"{grace:g}"
    env_vars[RAY_STOP_WAIT_ENV_VAR] = str(math.ceil(grace) + STOP_KILL_MARGIN_S)
    return env_vars


def build_runtime_env(
    *, working_dir: Path, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """`runtime_env` for `submit_job`: the working folder (minus excludes) and the env vars."""
    return {
        "working_dir": str(working_dir),
        "excludes": list(EXCLUDES),
        "env_vars": job_env_vars(environ),
    }
