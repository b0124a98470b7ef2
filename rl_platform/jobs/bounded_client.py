"""Ray's `JobSubmissionClient` with a timeout on every request.

Ray's client sends its requests (`requests.request`) without a timeout: against an address that
accepts a connection and never answers, `rlp jobs list` or `rlp submit` waited forever. Here
each request waits at most `RLP_NETWORK_TIMEOUT_S` (30 s) to connect and between bytes of the
answer, and a timeout is a `NetworkTimeoutError` naming the address and the bound. Imported
only where a client is made (`jobs/client.py`), so `rlp --help` does not import Ray.
"""

from typing import Any

import requests
from ray.job_submission import JobSubmissionClient

from rl_platform.utils.network_timeout import NetworkTimeoutError, bound_text, network_timeout_s


class BoundedJobClient(JobSubmissionClient):
    """`JobSubmissionClient` whose requests time out after `RLP_NETWORK_TIMEOUT_S`."""

    def __init__(self, address: str, **kwargs: Any) -> None:
        self._timeout_s = network_timeout_s()  # read before the version check of __init__
        super().__init__(address, **kwargs)

    def _do_request(self, method: str, endpoint: str, **kwargs: Any) -> "requests.Response":
        kwargs.setdefault("timeout", self._timeout_s)
        try:
            return super()._do_request(method, endpoint, **kwargs)
        except requests.exceptions.Timeout:
            raise NetworkTimeoutError(
                f"the job server at {self._address} did not answer {method} {endpoint} within "
                f"{bound_text(self._timeout_s)}; is it the head's dashboard port (8265)? "
                "Set RLP_NETWORK_TIMEOUT_S to wait longer"
            ) from None
