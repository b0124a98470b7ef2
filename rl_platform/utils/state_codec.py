"""Pickle-free serialization of nested state trees (RLlib `get_state()` output, league state).

Arrays go to one safetensors file; everything else (dicts, lists, scalars, strings, None) goes to
a JSON skeleton in which each array is a `{"__array__": key}` placeholder. Non-string dict keys
(optimizer state is keyed by parameter index) and tuples are tagged so they round-trip exactly.
Loading verifies the safetensors file's sha256 before any tensor is read, and reads only its
own format: a document labelled with another `format` (a newer rl_platform's `rlp-state-v2`), or
holding a tag it does not know, is refused naming the format, before any tensor is decoded.
"""

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load as load_arrays
from safetensors.numpy import save as save_arrays

from rl_platform.base.errors import IntegrityError
from rl_platform.utils.atomic import write_bytes_atomic

_ARRAY, _ITEMS, _TUPLE, _FLOAT = "__array__", "__items__", "__tuple__", "__float__"
_TAGS = {_ARRAY: str, _ITEMS: list, _TUPLE: list, _FLOAT: str}
STATE_FORMAT = "rlp-state-v1"
"""The format this version writes and reads (in each part JSON and in `rlp_state.json`)."""
_FORMAT = re.compile(r"rlp-state-v(\d+)")
# A one-key dict `{"__name__": "..." or [...]}` is how this codec tags values. RLlib's own keys
# that look alike (`ALL_MODULES`, a multi-agent `__all__`, ...) are data, never tags.
_TAG_LIKE = re.compile(r"__[a-z][a-z0-9_]*__")
_RLLIB_KEYS = {"__all__", "__all_modules__", "__env__", "__env_single__", "__common__", "__main__"}


class StateFormatError(IntegrityError):
    """A state file in a format this version does not read (a newer rl_platform wrote it)."""


def check_format(label: Any, *, where: str) -> None:
    """Refuse a `format` label other than `STATE_FORMAT`, naming both."""
    if label == STATE_FORMAT:
        return
    match = _FORMAT.fullmatch(label) if isinstance(label, str) else None
    if match is not None and int(match.group(1)) > 1:
        raise StateFormatError(
            f"{where}: written in format {label}, newer than this rl_platform reads "
            f"({STATE_FORMAT}); load it with the rl_platform version that wrote it, or upgrade"
        )
    raise StateFormatError(
        f"{where}: format {label!r} is not one this rl_platform reads ({STATE_FORMAT})"
    )


def check_tags(node: Any, *, where: str) -> None:
    """Refuse a skeleton holding a tag this version does not know, or a known tag whose value
    has the wrong form, before any tensor is decoded."""
    stack = [(node, where)]
    while stack:
        value, path = stack.pop()
        if isinstance(value, list):
            stack += [(v, f"{path}/{i}") for i, v in enumerate(value)]
            continue
        if not isinstance(value, dict):
            continue
        if len(value) == 1:
            ((key, inner),) = value.items()
            if key in _TAGS and not isinstance(inner, _TAGS[key]):
                raise StateFormatError(f"{path}: tag {key} holds a {type(inner).__name__}")
            unknown = key not in _TAGS and key not in _RLLIB_KEYS and _TAG_LIKE.fullmatch(key)
            if unknown and isinstance(inner, str | list):
                raise StateFormatError(
                    f"{path}: unknown tag {key}: not format {STATE_FORMAT}, which this "
                    "rl_platform reads (a newer version may have written it)"
                )
        stack += [(v, f"{path}/{k}") for k, v in value.items() if k != _ARRAY]


class _Encoder:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def encode(self, value: Any, path: str) -> Any:
        if isinstance(value, np.ndarray) or _is_tensor(value):
            array = _to_numpy(value)
            if array.dtype == object:
                raise TypeError(f"{path}: object arrays cannot be stored safely")
            key = f"a{len(self.arrays)}"
            self.arrays[key] = np.ascontiguousarray(array)
            return {_ARRAY: key}
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return {_FLOAT: repr(value)}
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, dict):
            if all(isinstance(k, str) for k in value):
                return {k: self.encode(v, f"{path}/{k}") for k, v in value.items()}
            return {_ITEMS: [[k, self.encode(v, f"{path}/{k}")] for k, v in value.items()]}
        if isinstance(value, tuple):
            return {_TUPLE: [self.encode(v, f"{path}/{i}") for i, v in enumerate(value)]}
        if isinstance(value, list):
            return [self.encode(v, f"{path}/{i}") for i, v in enumerate(value)]
        raise TypeError(f"{path}: cannot store a {type(value).__name__} without pickle")


def _is_tensor(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach")


def _to_numpy(value: Any) -> np.ndarray:
    if _is_tensor(value):
        return value.detach().cpu().numpy()
    return value


def _decode(node: Any, arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(node, list):
        return [_decode(v, arrays) for v in node]
    if not isinstance(node, dict):
        return node
    if _ARRAY in node:
        return arrays[node[_ARRAY]]
    if _FLOAT in node:
        return float(node[_FLOAT])
    if _ITEMS in node:
        return {_hashable(k): _decode(v, arrays) for k, v in node[_ITEMS]}
    if _TUPLE in node:
        return tuple(_decode(v, arrays) for v in node[_TUPLE])
    return {k: _decode(v, arrays) for k, v in node.items()}


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def save_state_tree(tree: Any, folder: Path, *, stem: str) -> str:
    """Write `<stem>.safetensors` and `<stem>.json` into `folder`; return the arrays' sha256."""
    encoder = _Encoder()
    skeleton = encoder.encode(tree, stem)
    blob = save_arrays(encoder.arrays) if encoder.arrays else save_arrays({})
    digest = sha256_bytes(blob)
    write_bytes_atomic(folder / f"{stem}.safetensors", blob)
    document = {"format": STATE_FORMAT, "sha256": digest, "tree": skeleton}
    write_bytes_atomic(folder / f"{stem}.json", json.dumps(document).encode())
    return digest


def load_state_tree(folder: Path, *, stem: str, expected_sha256: str | None = None) -> Any:
    """Inverse of `save_state_tree`; raises `IntegrityError` if the arrays file was altered."""
    document = json.loads((folder / f"{stem}.json").read_text())
    where = str(folder / f"{stem}.json")
    if not isinstance(document, dict):
        raise StateFormatError(f"{where}: not a state document (a {type(document).__name__})")
    check_format(document.get("format"), where=where)
    check_tags(document.get("tree"), where=where)
    blob = (folder / f"{stem}.safetensors").read_bytes()
    digest = sha256_bytes(blob)
    for expected in {document.get("sha256"), expected_sha256} - {None}:
        if digest != expected:
            raise IntegrityError(
                f"{folder / stem}.safetensors: sha256 {digest[:12]}... does not match the recorded "
                f"{expected[:12]}...; the file was modified or truncated — refusing to load it"
            )
    return _decode(document["tree"], load_arrays(blob))
