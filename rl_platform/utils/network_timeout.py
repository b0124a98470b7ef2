"""How long `rlp` waits on the network: a storage call (`s3://`, `gs://`), a job server's
answer, a cluster's address. One bound for all of them, `RLP_NETWORK_TIMEOUT_S` (default
`DEFAULT_NETWORK_TIMEOUT_S`, 30 s), named in every message that reports it.

Where a client has its own timeouts (requests, pyarrow's S3) they are set from the bound; where
it has none that cover a server that accepts and never answers (pyarrow's GCS retries for 15
minutes), `call_within` runs the call in a daemon thread and stops waiting at the bound: the
call may still finish in the background, and a daemon thread never holds up the exit.
"""

import threading
from collections.abc import Callable, Mapping
from typing import TypeVar

from rl_platform.base.errors import UserError
from rl_platform.utils.env_seconds import seconds_from_env

NETWORK_TIMEOUT_ENV = "RLP_NETWORK_TIMEOUT_S"
DEFAULT_NETWORK_TIMEOUT_S = 30.0
T = TypeVar("T")


class NetworkTimeoutError(UserError, TimeoutError):
    """Nothing answered within `RLP_NETWORK_TIMEOUT_S`."""


def network_timeout_s(environ: Mapping[str, str] | None = None) -> float:
    """`RLP_NETWORK_TIMEOUT_S` in seconds (> 0, finite), else the default."""
    return seconds_from_env(NETWORK_TIMEOUT_ENV, DEFAULT_NETWORK_TIMEOUT_S, environ)


def bound_text(seconds: float) -> str:
    """`RLP_NETWORK_TIMEOUT_S=30 s`, for messages."""
    return f"{NETWORK_TIMEOUT_ENV}={seconds:g} s"


def call_within(call: Callable[[], T], *, seconds: float, what: str) -> T:
    """`call()`, or `NetworkTimeoutError` naming `what` and the bound once `seconds` passed."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name=f"rlp-network:{what[:40]}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise NetworkTimeoutError(
            f"{what}: no answer within {bound_text(seconds)} (set {NETWORK_TIMEOUT_ENV} to "
            "wait longer)"
        )
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
