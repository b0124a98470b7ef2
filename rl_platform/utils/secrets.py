"""Masking of secret values before anything about an environment is shown or logged.

Runtime envs and configs carry API keys and tokens next to harmless settings; every place that
prints such a mapping passes it through `mask_secrets` so a value never reaches a terminal or a
log by accident.
"""

import re
from collections.abc import Mapping
from typing import Any

MASK = "***"

# `*_KEY`, `*_TOKEN`, `*_SECRET` (also the bare words, and `-` as separator for header-style
# names) and anything that mentions a password.
_SECRET_KEY = re.compile(r"(?:^|[_-])(?:KEY|TOKEN|SECRET)$|PASSWORD", re.IGNORECASE)


def is_secret_key(key: object) -> bool:
    """True if a value stored under `key` must never be shown."""
    return isinstance(key, str) and _SECRET_KEY.search(key) is not None


def mask_secrets(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of `mapping` with secret values replaced by `***`, nested mappings included.

    The input is left untouched so the real values can still be sent where they belong.
    """
    masked: dict[str, Any] = {}
    for key, value in mapping.items():
        masked[key] = MASK if is_secret_key(key) else _mask_value(value)
    return masked


def _mask_value(value: Any) -> Any:
    """Mask mappings nested anywhere, also inside lists and tuples (`[{API_KEY: ...}]`)."""
    if isinstance(value, Mapping):
        return mask_secrets(value)
    if isinstance(value, list | tuple):
        return type(value)(_mask_value(item) for item in value)
    return value
