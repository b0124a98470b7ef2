"""Check 2 for an observation filter's statistics: nothing in a checkpoint reaches RLlib's
`np.load(allow_pickle=True)` (ray/rllib/utils/filter.py, `RunningStat.from_state`).

A real filtered CartPole run (`env.observation_filter: mean_std`) checkpoints the statistics
as arrays in safetensors; `--resume` hands RLlib exactly those statistics, from a checkpoint
of today's form and from one of the form written before (strings in the JSON); a pickle
planted in such a string, with every hash recomputed, is refused with exit 2 and never runs.
"""

import base64
import io
import json
import shutil
import zlib
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy
from typer.testing import CliRunner

from rl_platform import load_spec, train
from rl_platform.cli import app
from rl_platform.rllib import filter_state
from rl_platform.rllib.algorithm_state import ALGORITHM_PART
from rl_platform.run import loop
from rl_platform.storage.checkpoints import (
    META_FILE,
    CheckpointStore,
    load_checkpoint,
    meta_digest,
    sha256_file,
)
from tests.reliability.support import CARTPOLE, TINY, read_metrics, sets

FILTERED = [*TINY, "env.observation_filter=mean_std", "stop.iterations=2"]
FILTER = "env_runner/env_to_module_connector/MeanStdFilter"


@pytest.fixture(scope="module")
def filtered_run(ray_local, tmp_path_factory) -> Path:
    """Two tiny PPO iterations on CartPole with RLlib's MeanStdFilter, a checkpoint each."""
    spec = load_spec(CARTPOLE, profile="smoke", overrides=FILTERED)
    return train(spec, out_dir=tmp_path_factory.mktemp("filtered")).run_dir


def _copy(run_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    return copy, CheckpointStore(copy / "checkpoints").latest()


def _running_stat(algorithm_state: dict) -> dict:
    """The training filter's one RunningStat, checked, as arrays."""
    agents = filter_state.filter_states(algorithm_state, where="test")[FILTER]
    return agents[None]["running_stats"][0]


def _json_running_stat(document: dict) -> dict:
    """The same RunningStat in a part JSON's skeleton (`{None: ...}` is an `__items__` tag)."""
    node = document["tree"]
    for key in FILTER.split("/"):
        node = node[key]
    ((agent, state),) = node["__items__"]
    assert agent is None
    return state["running_stats"][0]


def rllib_string(array: np.ndarray) -> str:
    """RLlib's `_serialize_ndarray` (np.save -> zlib -> base64), pickle allowed as RLlib's."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return base64.b64encode(zlib.compress(buffer.getvalue())).decode("ascii")


def _as_written_before(checkpoint: Path, *, plant: str | None = None) -> None:
    """Rewrite `checkpoint` as rl_platform wrote it before this change (RLlib's strings in
    the JSON), `plant` in place of the mean, and record every hash again as an attacker can
    (tests/reliability/test_integrity.py)."""
    part = checkpoint / f"{ALGORITHM_PART}.json"
    document = json.loads(part.read_text())
    arrays = safetensors.numpy.load_file(checkpoint / f"{ALGORITHM_PART}.safetensors")
    stat = _json_running_stat(document)
    for name in filter_state.STAT_ARRAYS:
        stat[name] = rllib_string(arrays[stat[name]["__array__"]])
    if plant is not None:
        stat["mean_array"] = plant
    part.write_text(json.dumps(document))
    meta = json.loads((checkpoint / META_FILE).read_text())
    meta["files"][part.name] = sha256_file(part)
    meta["meta_sha256"] = meta_digest(meta)
    (checkpoint / META_FILE).write_text(json.dumps(meta))


class _TouchOnUnpickle:
    """Unpickling this creates the file at `path`: a stand-in for any code."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _payload(marker: Path) -> str:
    """An object array in RLlib's string form whose unpickling creates `marker`."""
    return rllib_string(np.array([_TouchOnUnpickle(marker), 0.0], dtype=object))


def _resume(run_dir: Path, *overrides: str):
    args = ["train", str(CARTPOLE), "--profile", "smoke", *sets([*FILTERED, *overrides])]
    return CliRunner().invoke(app, [*args, "--resume", str(run_dir)])


def test_a_filtered_checkpoint_holds_the_statistics_as_arrays(filtered_run):
    latest = CheckpointStore(filtered_run / "checkpoints").latest()
    document = json.loads((latest / f"{ALGORITHM_PART}.json").read_text())
    in_json = _json_running_stat(document)
    assert all(set(in_json[name]) == {"__array__"} for name in filter_state.STAT_ARRAYS)
    stat = _running_stat(load_checkpoint(latest).parts[ALGORITHM_PART])
    assert stat["num_pushes"] >= 400  # two iterations of 200 env steps, and the resets
    assert stat["mean_array"].dtype == np.float64 and stat["mean_array"].shape == (4,)
    assert stat["sum_sq_diff_array"].min() > 0


@pytest.mark.parametrize("form", ["arrays", "strings_written_before"])
def test_resume_restores_the_saved_statistics(filtered_run, tmp_path, monkeypatch, form):
    run_dir, latest = _copy(filtered_run, tmp_path)
    saved = _running_stat(load_checkpoint(latest).parts[ALGORITHM_PART])
    if form == "strings_written_before":
        _as_written_before(latest)
    restored: list[dict] = []
    restore = loop.restore_algorithm

    def spy(algo, checkpoint):
        iteration = restore(algo, checkpoint)
        restored.append(_running_stat(filter_state.as_arrays(algo.get_state())))
        return iteration

    monkeypatch.setattr(loop, "restore_algorithm", spy)
    result = _resume(run_dir, "stop.iterations=3")
    assert result.exit_code == 0, result.output
    (stat,) = restored
    assert {k: stat[k] for k in filter_state.STAT_COUNTS} == {
        k: saved[k] for k in filter_state.STAT_COUNTS
    }
    for name in filter_state.STAT_ARRAYS:
        np.testing.assert_array_equal(stat[name], saved[name], err_msg=name)
    assert len(read_metrics(run_dir)) == 3


def test_the_planted_payload_is_live_under_rllibs_decoder(tmp_path):
    """Proves the payload below is real: RLlib's own decoder runs it."""
    from ray.rllib.utils.serialization import _deserialize_ndarray

    marker = tmp_path / "pwned"
    _deserialize_ndarray(_payload(marker))
    assert marker.exists()


def test_a_planted_pickle_in_a_checkpoint_is_refused_and_never_runs(filtered_run, tmp_path):
    run_dir, latest = _copy(filtered_run, tmp_path)
    marker = tmp_path / "pwned"
    _as_written_before(latest, plant=_payload(marker))
    metrics_before = (run_dir / "metrics.jsonl").read_text()
    load_checkpoint(latest)  # every hash was recorded again: the record alone cannot tell

    result = _resume(run_dir, "stop.iterations=3")
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert f"{FILTER}/None/running_stats/0/mean_array" in flat
    assert "refusing to hand it to RLlib" in flat and "Traceback" not in result.output
    assert (run_dir / "metrics.jsonl").read_text() == metrics_before
    assert CheckpointStore(run_dir / "checkpoints").latest() == latest

    played = CliRunner().invoke(app, ["eval", f"checkpoint://{run_dir}", "--episodes", "1"])
    assert played.exit_code == 2, played.output
    assert "mean_array" in " ".join(played.output.split())
    assert not marker.exists(), "the planted pickle ran"
