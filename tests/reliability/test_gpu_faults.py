"""GPU faults without a GPU: `--profile gpu` on a machine without CUDA, and a CUDA
out-of-memory error in the middle of a run (raised as torch raises it)."""

import torch
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.run.loop import TrainingLoop
from rl_platform.storage.checkpoints import CheckpointStore
from tests.reliability.support import CARTPOLE, TINY, only_run_dir, sets

RECIPE = CARTPOLE.parent / "duel_selfplay_transformer.yaml"


def test_the_gpu_profile_without_cuda_is_one_line_naming_the_profile(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # also on a GPU machine
    out = tmp_path / "runs"
    result = CliRunner().invoke(app, ["train", str(RECIPE), "--profile", "gpu", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "--profile gpu" in result.output and "no CUDA GPU" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert not out.exists()  # refused before any run folder


def test_out_of_memory_names_the_settings_and_keeps_the_checkpoints(
    tmp_path, ray_local, monkeypatch
) -> None:
    original = TrainingLoop._health_verdict

    def out_of_memory_in_iteration_2(self, metrics):
        if metrics["iteration"] == 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return original(self, metrics)

    monkeypatch.setattr(TrainingLoop, "_health_verdict", out_of_memory_in_iteration_2)
    out = tmp_path / "runs"
    overrides = [*TINY, "stop.iterations=4", "checkpoint.every_iterations=1"]
    result = CliRunner().invoke(app, ["train", str(CARTPOLE), *sets(overrides), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "GPU out of memory (CUDA out of memory. Tried to allocate 2.00 GiB)" in result.output
    assert "env.envs_per_runner" in result.output and "training.minibatch_size" in result.output
    assert "iter_000001" in result.output and "Traceback" not in result.output
    store = CheckpointStore(only_run_dir(out) / "checkpoints")
    assert [p.name for p in store.complete_checkpoints()] == ["iter_000001"]
