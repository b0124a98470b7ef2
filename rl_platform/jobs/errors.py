"""User-facing errors of the jobs client: the CLI edge shows them without a traceback."""

from rl_platform.base.errors import UserError


class ClusterUnreachableError(UserError):
    """Nothing answers at the job server address (cluster down, tunnel closed, wrong port)."""


class ClusterAuthError(UserError):
    """The job server refused the request: token missing (401) or wrong (403)."""


class JobNotFoundError(UserError):
    """The cluster knows no job with the given id."""


class SubmitError(UserError):
    """The job could not be built or submitted from what the user gave."""
