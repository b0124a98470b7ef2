"""Whether the cluster in `RAY_ADDRESS` answers, asked before a run writes anything.

`ray.init()` with `RAY_ADDRESS` at a closed port retries for minutes, printing Ray's GCS
warnings, and left a run folder with nothing trained. One TCP connection, waiting at most
`RLP_NETWORK_TIMEOUT_S` (30 s), tells first: refused or unanswered is one line naming the
address, before a run folder exists.
"""

import os
import socket
import urllib.parse
from collections.abc import Mapping

from rl_platform.base.errors import UserError
from rl_platform.utils.network_timeout import bound_text, network_timeout_s

ADDRESS_ENV = "RAY_ADDRESS"
_NOT_AN_ADDRESS = {"", "auto", "local"}
"""`ray.init` values that name no host to connect to."""


def cluster_host_port(address: str) -> tuple[str, int] | None:
    """`(host, port)` of `host:port`, `ray://host:port` or `http://host:port`; None if the
    value names no host and port (`auto`, or a form Ray parses itself)."""
    if address.strip().lower() in _NOT_AN_ADDRESS:
        return None
    parsed = urllib.parse.urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        port = parsed.port
    except ValueError:
        return None
    if not parsed.hostname or port is None:
        return None
    return parsed.hostname, port


def check_cluster_answers(environ: Mapping[str, str] | None = None) -> None:
    """Raise a `UserError` naming `RAY_ADDRESS` when nothing accepts a connection there."""
    environ = os.environ if environ is None else environ
    address = environ.get(ADDRESS_ENV, "")
    target = cluster_host_port(address)
    if target is None:
        return
    seconds = network_timeout_s(environ)
    try:
        socket.create_connection(target, timeout=seconds).close()
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise UserError(
            f"{ADDRESS_ENV}={address}: no Ray cluster answers there ({reason.lower()}; waited "
            f"at most {bound_text(seconds)}); start the cluster, correct {ADDRESS_ENV}, or "
            "unset it to train on this machine"
        ) from None
