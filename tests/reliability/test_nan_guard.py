"""Check 10: NaN rewards are detected within the iteration they appear in; the update is not
applied (weights stay finite), no NaN checkpoint becomes `latest`, the run stops clearly."""

import numpy as np
import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import TrainingHealthError
from rl_platform.cli import app
from rl_platform.rllib.algorithm_state import (
    ALGORITHM_PART,
    module_weights,
    nonfinite_weights,
    snapshot_algorithm,
)
from rl_platform.run.loop import TrainingLoop
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from tests.reliability.faulty_envs import NAN_REWARD_ENV_ID
from tests.reliability.support import TINY, only_run_dir, read_metrics, sets

BATCH = 200
# Iteration 1 samples env steps 1..200 (clean); NaN rewards start at step 251, in iteration 2.
NAN_SPEC = f"""\
name: nan_guard
env:
  id: {NAN_REWARD_ENV_ID}
  kwargs: {{nan_after: 250}}
model: {{hidden: [16, 16]}}
stop: {{iterations: 6}}
checkpoint: {{every_iterations: 1, keep_last: 10}}
"""


def test_nan_rewards_stop_the_run_clearly_and_keep_a_finite_latest(
    write_spec, tmp_path, ray_local, monkeypatch
):
    live_weights: list[dict] = []
    original = TrainingLoop._health_verdict

    def check_health_and_record_weights(self, metrics):
        # The state the run holds at the moment the check runs, before it can stop anything.
        live_weights.append(module_weights(self.algo.get_state()))
        return original(self, metrics)

    monkeypatch.setattr(TrainingLoop, "_health_verdict", check_health_and_record_weights)
    spec = write_spec(NAN_SPEC)
    out = tmp_path / "runs"
    overrides = [*TINY, f"training.train_batch_size={BATCH}"]
    result = CliRunner().invoke(app, ["train", str(spec), *sets(overrides), "--out", str(out)])

    assert result.exit_code == 3, result.output
    assert "training stopped: iteration 2:" in result.output
    assert "NaN/Inf" in result.output and "iter_000001" in result.output
    assert "Traceback" not in result.output

    run_dir = only_run_dir(out)
    rows = read_metrics(run_dir)
    assert [int(r["iteration"]) for r in rows] == [1, 2]  # detected in the iteration it appeared
    assert rows[0].get("health/nonfinite_update", 0.0) == 0.0
    assert rows[1]["health/nonfinite_update"] == 1.0 and rows[1]["health/nonfinite"] == 1.0

    store = CheckpointStore(run_dir / "checkpoints")
    assert [p.name for p in store.complete_checkpoints()] == ["iter_000001"]
    assert store.latest().name == "iter_000001"
    saved = load_checkpoint(store.latest()).parts[ALGORITHM_PART]
    assert nonfinite_weights(saved) == []

    # The NaN update was refused: the live weights at detection are finite and unchanged
    # from the last good checkpoint.
    assert len(live_weights) == 2
    at_detection, last_good = live_weights[1], module_weights(saved)
    assert set(at_detection) == set(last_good)
    for module_id, params in at_detection.items():
        for name, array in params.items():
            assert np.isfinite(array).all(), f"{module_id}/{name}"
            np.testing.assert_array_equal(array, last_good[module_id][name], err_msg=name)


class _AlgoWithState:
    def __init__(self, state: dict) -> None:
        self.state = state

    def get_state(self) -> dict:
        return self.state


def _state(value: float) -> dict:
    weights = {"pi.weight": np.full((2, 2), value, dtype=np.float32)}
    return {"learner_group": {"learner": {"rl_module": {"default_policy": weights}}}}


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_weights_are_never_checkpointed(bad, tmp_path):
    store = CheckpointStore(tmp_path)
    store.save(iteration=1, parts=snapshot_algorithm(_AlgoWithState(_state(1.0))), meta={})
    with pytest.raises(TrainingHealthError, match="refusing to checkpoint non-finite weights"):
        store.save(iteration=2, parts=snapshot_algorithm(_AlgoWithState(_state(bad))), meta={})
    assert [p.name for p in store.complete_checkpoints()] == ["iter_000001"]
    assert store.latest().name == "iter_000001"
