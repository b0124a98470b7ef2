"""Submitting experiment specs as Ray jobs and managing them on a cluster.

Importing this package does not import Ray; the submodules do so only when they talk to a
cluster.
"""

from rl_platform.jobs.client import make_client, read_token, resolve_address
from rl_platform.jobs.entrypoint import build_entrypoint, build_train_argv
from rl_platform.jobs.submit import Submission, submit_spec

__all__ = [
    "Submission",
    "build_entrypoint",
    "build_train_argv",
    "make_client",
    "read_token",
    "resolve_address",
    "submit_spec",
]
