"""Masking of secret values before anything about a run is shown, logged or written.

Runtime envs and configs carry API keys and tokens next to harmless settings. A value is secret
when it sits under a secret-looking key (`API_KEY`, `apiKey`, `db-password`, ...) or when it
equals a known secret anywhere: a value under such a key in the same mapping, an environment
variable with a secret-looking name, or the Ray auth token. Known secrets are masked by value
too, so one interpolated into another field (`url: https://u:${vars.DB_PASSWORD}@db`) or given
under an innocent key does not leak: every occurrence inside a string becomes `***`.
"""

import functools
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

MASK = "***"
MIN_SECRET_CHARS = 6  # shorter values (`on`, `1234`) would mask ordinary text
_TOKEN_FILE_MAX_BYTES = 4096

# `*_KEY`, `*_TOKEN`, `*_SECRET` (also the bare words, `-` as separator for header-style names),
# passwords, credentials and authorization headers, any case...
_SECRET_KEY = re.compile(
    r"(?:^|[_-])(?:KEY|TOKEN|SECRET)S?$|PASSW(?:OR)?D|CREDENTIAL|AUTHORIZATION|COOKIE",
    re.IGNORECASE,
)
# ...and camelCase (`apiKey`, `authToken`, `clientSecret`); case-sensitive so `monkey` is not.
_CAMEL_SECRET_KEY = re.compile(r"[a-z0-9](?:Key|Token|Secret)s?$")


def is_secret_key(key: object) -> bool:
    """True if a value stored under `key` must never be shown."""
    return isinstance(key, str) and bool(_SECRET_KEY.search(key) or _CAMEL_SECRET_KEY.search(key))


@functools.cache
def _ray_token() -> str | None:
    path_var = os.environ.get("RAY_AUTH_TOKEN_PATH")
    path = Path(path_var).expanduser() if path_var else Path.home() / ".ray" / "auth_token"
    try:
        if path.is_file() and path.stat().st_size <= _TOKEN_FILE_MAX_BYTES:
            return path.read_text(encoding="utf-8", errors="ignore").strip() or None
    except OSError:
        return None
    return None


def environment_secrets() -> set[str]:
    """Secret values this process knows of: env vars with secret names, the Ray token."""
    values = {v for k, v in os.environ.items() if is_secret_key(k)}
    token = _ray_token()
    if token:
        values.add(token)
    return {v for v in values if len(v) >= MIN_SECRET_CHARS}


def _values_under_secret_keys(value: Any, under_secret: bool = False) -> Iterable[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _values_under_secret_keys(item, under_secret or is_secret_key(key))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _values_under_secret_keys(item, under_secret)
    elif under_secret and isinstance(value, str | int | float) and not isinstance(value, bool):
        yield str(value)


def secret_values(value: Any) -> set[str]:
    """Secret values this data knows of (under secret-looking keys, nested mappings and lists
    included) and this process (`environment_secrets`), long enough to mask by value."""
    found = {v for v in _values_under_secret_keys(value) if len(v) >= MIN_SECRET_CHARS}
    return found | environment_secrets()


def mask_text(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of each secret replaced by `***` (longest first)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= MIN_SECRET_CHARS and secret in text:
            text = text.replace(secret, MASK)
    return text


def mask_secrets(mapping: Mapping[str, Any], *, known: Iterable[str] = ()) -> dict[str, Any]:
    """A copy of `mapping` with secrets masked by key and by value (see the module docstring),
    nested mappings and lists included; `known` adds secret values. The input is untouched so
    the real values can still be sent where they belong."""
    secrets = environment_secrets() | set(known) | set(_values_under_secret_keys(mapping))
    return _mask_mapping(mapping, secrets)


def _mask_mapping(mapping: Mapping[str, Any], secrets: set[str]) -> dict[str, Any]:
    return {
        key: MASK if is_secret_key(key) else _mask_value(value, secrets)
        for key, value in mapping.items()
    }


def _mask_value(value: Any, secrets: set[str]) -> Any:
    if isinstance(value, Mapping):
        return _mask_mapping(value, secrets)
    if isinstance(value, list | tuple):
        return type(value)(_mask_value(item, secrets) for item in value)
    if isinstance(value, str):
        return mask_text(value, secrets)
    return value


def mask_log_record(record: dict[str, Any], *, known: Iterable[str] = ()) -> None:
    """loguru patcher: mask known secrets in every log message (`logger.configure(patcher=)`);
    `known` adds secret values (a run's spec's, bound with `functools.partial`)."""
    record["message"] = mask_text(record["message"], environment_secrets() | set(known))
