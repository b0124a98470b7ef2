"""RLlib's MeanStdFilter state in a checkpoint as plain arrays, never as pickles (no Ray).

`env.observation_filter: mean_std` puts RLlib's `MeanStdFilter` connector on the env runners;
its `get_state()` holds, per agent, the filter's `shape`, flags and one `RunningStat` state
whose four arrays RLlib writes as strings (`_serialize_ndarray`: `np.save` -> zlib -> base64)
and reads back with `np.load(..., allow_pickle=True)` (ray/rllib/utils/filter.py,
`RunningStat.from_state`). A string in a checkpoint someone hands us could therefore run code
on `set_state` (docs/reliability.md §2).

So a checkpoint holds those arrays as arrays (`as_arrays`, when it is taken): they go to
safetensors like every weight and are hashed with them. On restore (`for_rllib`) each array is
checked (a float array of the filter's shape) and written back in RLlib's string form by our
own encoder, from the array safetensors decoded. A checkpoint written before (strings in its
JSON) still loads: each string is decoded with `allow_pickle=False` and checked the same way;
an object array, a pickle or garbage is an `IntegrityError` naming the field, before RLlib
sees anything. `filter_states` reads the checked statistics (policies acting outside RLlib).
"""

import base64
import binascii
import io
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from rl_platform.base.errors import IntegrityError

FILTER_CONNECTOR = "MeanStdFilter"
"""The key of the filter's state in a connector pipeline's state (RLlib keys each piece by
its class name, ray/rllib/connectors/connector_pipeline_v2.py)."""
STAT_ARRAYS = ("mean_array", "mean_delta_array", "sum_sq_diff_array", "sum_sq_diff_delta_array")
STAT_COUNTS = ("num_pushes", "num_pushes_delta")
_MAX_DECODED_BYTES = 64 * 1024 * 1024
"""A compressed string may not inflate past this (a zip bomb in an old checkpoint's JSON)."""
_HINT = (
    "refusing to hand it to RLlib, which would unpickle it; the checkpoint was edited or not "
    "written by rl_platform: resume from another checkpoint, or train anew"
)
AgentStates = dict[Any, dict[str, Any]]
"""One filter's state: agent id (None for a single-agent env) -> that agent's filter state."""


def encode_array(array: np.ndarray) -> str:
    """RLlib's string form of an array (`_serialize_ndarray`), written without pickle."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return base64.b64encode(zlib.compress(buffer.getvalue())).decode("ascii")


def decode_array(text: str, *, where: str) -> np.ndarray:
    """The array in RLlib's string form, read with `allow_pickle=False`; `IntegrityError`
    naming `where` if it is not one."""
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(base64.b64decode(text, validate=True), _MAX_DECODED_BYTES)
        if inflater.unconsumed_tail:
            raise ValueError(f"inflates past {_MAX_DECODED_BYTES} bytes")
        return np.load(io.BytesIO(raw), allow_pickle=False)
    except (binascii.Error, zlib.error, ValueError, OSError, EOFError) as exc:
        # numpy's first sentence ("This file contains pickled (object) data") says enough.
        detail = str(exc).split(". ")[0][:120] if str(exc) else type(exc).__name__
        raise _refused(where, f"not an array in RLlib's form ({detail})") from None


def as_arrays(state: Any) -> Any:
    """`state` (an `Algorithm.get_state()` tree) with every filter's statistics as arrays."""
    return _map_filters(state, "", lambda agents, path: _each_agent(agents, path, _same))


def for_rllib(state: Any, *, where: str) -> Any:
    """`state` with every filter's statistics checked and in RLlib's string form, written by
    `encode_array`; an `IntegrityError` naming the field (under `where`) for anything else."""
    return _map_filters(state, where, lambda agents, path: _each_agent(agents, path, encode_array))


def filter_states(state: Any, *, where: str) -> dict[str, AgentStates]:
    """Every filter in `state`, checked, its statistics as arrays, by where it sits in the
    tree (`env_runner/env_to_module_connector/MeanStdFilter`)."""
    found: dict[str, AgentStates] = {}

    def collect(agents: AgentStates, path: str) -> AgentStates:
        found[path.removeprefix(where).strip("/")] = _each_agent(agents, path, _same)
        return agents

    _map_filters(state, where, collect)
    return found


def _same(array: np.ndarray) -> np.ndarray:
    return array


def _map_filters(node: Any, path: str, replace: Callable[[AgentStates, str], Any]) -> Any:
    """`node` with `replace(agents, path)` in place of each filter's state; the rest shared
    (the tree is RLlib's or the checkpoint's: nothing is changed in place)."""
    if isinstance(node, dict):
        return {
            key: (
                replace(value, f"{path}/{key}")
                if key == FILTER_CONNECTOR and isinstance(value, dict)
                else _map_filters(value, f"{path}/{key}", replace)
            )
            for key, value in node.items()
        }
    if isinstance(node, list | tuple):
        return type(node)(_map_filters(v, f"{path}/{i}", replace) for i, v in enumerate(node))
    return node


def _each_agent(agents: AgentStates, path: str, finish: Callable[[np.ndarray], Any]) -> dict:
    return {agent: _checked(state, f"{path}/{agent}", finish) for agent, state in agents.items()}


def _checked(agent_state: Any, path: str, finish: Callable[[np.ndarray], Any]) -> dict:
    """One agent's filter state with each statistic checked and passed through `finish`."""
    if not isinstance(agent_state, dict):
        raise _refused(path, f"a {type(agent_state).__name__}, not a filter state")
    shape = _filter_shape(agent_state.get("shape"), f"{path}/shape")
    stats = agent_state.get("running_stats")
    if not (isinstance(stats, list | tuple) and len(stats) == 1):
        # One RunningStat per Box; RLlib's filter of nested spaces does not build in this
        # version (it makes an object array of the shape dict), so no checkpoint holds more.
        raise _refused(f"{path}/running_stats", "not the one running statistic of a Box")
    return {
        **agent_state,
        "running_stats": [_stat(stats[0], shape, f"{path}/running_stats/0", finish)],
    }


def _stat(stat: Any, shape: tuple[int, ...], where: str, finish: Callable) -> dict:
    keys = sorted(map(str, stat)) if isinstance(stat, dict) else type(stat).__name__
    if not isinstance(stat, dict) or set(stat) != {*STAT_ARRAYS, *STAT_COUNTS}:
        raise _refused(where, f"not a RunningStat state ({keys})")
    for name in STAT_COUNTS:
        count = stat[name]
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
            raise _refused(f"{where}/{name}", f"{count!r} is not a count")
    out: dict[str, Any] = {name: int(stat[name]) for name in STAT_COUNTS}
    for name in STAT_ARRAYS:
        out[name] = finish(_float_array(stat[name], shape, f"{where}/{name}"))
    return out


def _float_array(value: Any, shape: tuple[int, ...], where: str) -> np.ndarray:
    if isinstance(value, str):  # a checkpoint written before the arrays were arrays
        value = decode_array(value, where=where)
    if not isinstance(value, np.ndarray):
        raise _refused(where, f"a {type(value).__name__}, not an array")
    if not np.issubdtype(value.dtype, np.floating):
        raise _refused(where, f"a {value.dtype} array, not a float one")
    if value.shape != shape:
        raise _refused(where, f"shape {value.shape}, not the filter's {shape}")
    return value


def _filter_shape(value: Any, where: str) -> tuple[int, ...]:
    """The filter's shape: RLlib's `np.array(space.shape)` of a Box."""
    array = np.asarray(value) if isinstance(value, np.ndarray | list | tuple) else None
    if (
        array is None
        or array.ndim != 1
        or not np.issubdtype(array.dtype, np.integer)
        or (array < 0).any()
    ):
        raise _refused(where, f"{value!r} is not a Box's shape")
    return tuple(int(n) for n in array)


def _refused(where: str, problem: str) -> IntegrityError:
    return IntegrityError(f"{where}: {problem}; {_HINT}")
