"""A `JobSubmissionClient` for a cluster address, carrying the cluster's auth token.

Ray 2.60 token authentication: the dashboard/job server accepts `Authorization: Bearer <token>`
(401 without a token, 403 with a wrong one). We read the token ourselves, in the same order as
Ray (`RAY_AUTH_TOKEN`, then the file named by `RAY_AUTH_TOKEN_PATH`, then `~/.ray/auth_token`),
and pass the header explicitly, so the client works whether or not `RAY_AUTH_MODE=token` is set
in the local shell. The token is never logged or printed.
"""

import contextlib
import os
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from loguru import logger

from rl_platform.base.errors import UserError
from rl_platform.jobs.errors import ClusterAuthError, ClusterUnreachableError
from rl_platform.utils.network_timeout import NetworkTimeoutError

if TYPE_CHECKING:
    from ray.job_submission import JobSubmissionClient

DEFAULT_ADDRESS = "http://127.0.0.1:8265"
ADDRESS_ENV_VAR = "RAY_ADDRESS"
TOKEN_ENV_VAR = "RAY_AUTH_TOKEN"
TOKEN_PATH_ENV_VAR = "RAY_AUTH_TOKEN_PATH"
# Ray lets these override any address handed to JobSubmissionClient; an explicit --address must
# win, so they are hidden while the client is built.
_RAY_ADDRESS_OVERRIDES = ("RAY_API_SERVER_ADDRESS", ADDRESS_ENV_VAR)


def default_token_path() -> Path:
    return Path.home() / ".ray" / "auth_token"


def resolve_address(address: str | None = None) -> str:
    """Explicit address, else `RAY_ADDRESS`, else the local dashboard port; checked to be a
    form Ray's job client takes (`http(s)://HOST:PORT`, `HOST:PORT`, `ray://HOST:PORT`,
    `auto`): Ray's own check ends in a traceback."""
    resolved = address or os.environ.get(ADDRESS_ENV_VAR) or DEFAULT_ADDRESS
    if resolved == "auto":
        return resolved
    parsed = urllib.parse.urlsplit(resolved if "://" in resolved else f"http://{resolved}")
    try:
        port_ok = parsed.port is None or 0 < parsed.port < 65536
    except ValueError:
        port_ok = False
    host_ok = re.fullmatch(r"[A-Za-z0-9._:-]+", parsed.hostname or "") is not None
    if parsed.scheme not in ("http", "https", "ray") or not host_ok or not port_ok:
        source = "--address" if address else ADDRESS_ENV_VAR
        raise UserError(
            f"{source} {resolved!r}: not a job server address; expected http://HOST:PORT, e.g. "
            f"{DEFAULT_ADDRESS} (the dashboard port, forwarded from the head)"
        )
    return resolved


def read_token() -> str | None:
    """The cluster token from the environment or token files, or None when there is none."""
    token = os.environ.get(TOKEN_ENV_VAR, "").strip()
    if token:
        return token
    token_path = os.environ.get(TOKEN_PATH_ENV_VAR)
    if token_path:
        # Ray treats an unreadable RAY_AUTH_TOKEN_PATH as a misconfiguration, so do we.
        path = Path(token_path).expanduser()
        token = path.read_text().strip() if path.is_file() else ""
        if not token:
            raise ClusterAuthError(f"{TOKEN_PATH_ENV_VAR}={path} is missing or empty")
        return token
    path = default_token_path()
    if path.is_file():
        return path.read_text().strip() or None
    return None


def bearer_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


@contextlib.contextmanager
def _ray_address_env_hidden() -> Iterator[None]:
    saved = {name: os.environ.pop(name) for name in _RAY_ADDRESS_OVERRIDES if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def make_client(address: str | None = None) -> "JobSubmissionClient":
    """Connect to the job server at `address` (see `resolve_address`) and check it answers."""
    from ray.exceptions import AuthenticationError

    from rl_platform.jobs.bounded_client import BoundedJobClient

    resolved = resolve_address(address)
    token = read_token()
    if token is None:
        logger.debug("no Ray auth token found; requests go out without one")
    try:
        with _ray_address_env_hidden():
            return BoundedJobClient(resolved, headers=bearer_headers(token))
    except AuthenticationError as exc:
        raise ClusterAuthError(auth_hint(resolved, exc)) from None
    except ConnectionError:
        raise ClusterUnreachableError(
            f"no Ray job server answers at {resolved}; is the cluster up and the dashboard "
            "port forwarded (`ray dashboard cluster/aws-gpu.yaml`)?"
        ) from None
    except NetworkTimeoutError:
        raise
    except (RuntimeError, ValueError, KeyError, OSError) as exc:
        # Ray's version check (GET /api/version) on a server that is not Ray's: a 404, an
        # HTML page that is not JSON, JSON without `ray_version`, a 5xx.
        raise ClusterUnreachableError(not_a_job_server(resolved, exc)) from None


def not_a_job_server(address: str, exc: Exception) -> str:
    first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return (
        f"{address} answers, but not as a Ray job server (GET /api/version: {first_line[:120]}); "
        f"give the head's dashboard port (8265 by default), e.g. {DEFAULT_ADDRESS}"
    )


def auth_hint(address: str, exc: Exception) -> str:
    first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return (
        f"{address} refused the request ({first_line}). Put the cluster's token in "
        f"{TOKEN_ENV_VAR} or {default_token_path()} (`ray get-auth-token` on the head prints it)."
    )
