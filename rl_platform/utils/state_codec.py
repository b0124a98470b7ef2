"""Pickle-free serialization of nested state trees (RLlib `get_state()` output, league state).

Arrays go to one safetensors file; everything else (dicts, lists, scalars, strings, None) goes to
a JSON skeleton in which each array is a `{"__array__": key}` placeholder. Non-string dict keys
(optimizer state is keyed by parameter index) and tuples are tagged so they round-trip exactly.
Loading verifies the safetensors file's sha256 before any tensor is read.
"""

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load as load_arrays
from safetensors.numpy import save as save_arrays

from rl_platform.base.errors import IntegrityError
from rl_platform.utils.atomic import write_bytes_atomic

_ARRAY, _ITEMS, _TUPLE, _FLOAT = "__array__", "__items__", "__tuple__", "__float__"


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
    document = {"format": "rlp-state-v1", "sha256": digest, "tree": skeleton}
    write_bytes_atomic(folder / f"{stem}.json", json.dumps(document).encode())
    return digest


def load_state_tree(folder: Path, *, stem: str, expected_sha256: str | None = None) -> Any:
    """Inverse of `save_state_tree`; raises `IntegrityError` if the arrays file was altered."""
    document = json.loads((folder / f"{stem}.json").read_text())
    blob = (folder / f"{stem}.safetensors").read_bytes()
    digest = sha256_bytes(blob)
    for expected in {document.get("sha256"), expected_sha256} - {None}:
        if digest != expected:
            raise IntegrityError(
                f"{folder / stem}.safetensors: sha256 {digest[:12]}... does not match the recorded "
                f"{expected[:12]}...; the file was modified or truncated — refusing to load it"
            )
    return _decode(document["tree"], load_arrays(blob))
