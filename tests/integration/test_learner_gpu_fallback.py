"""A remote learner asking for a GPU on a node that advertises one without CUDA (as on Ray's
fake multi-node cluster) trains on CPU and says so, instead of RLlib's NCCL crash
(rl_platform/learners/device.py)."""

import subprocess
import sys
import textwrap

import pytest
import torch

from tests.conftest import EXPERIMENTS, REPO_ROOT

# The driver runs in a subprocess: its Ray advertises a GPU this machine does not have, and
# the test session's own Ray must not be the one it joins.
DRIVER = textwrap.dedent(
    """
    import sys
    import ray
    from rl_platform import load_spec, train

    ray.init(
        address="local", num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False,
        resources={"rlp_learner": 1, "rlp_env_runner": 1},
    )
    spec = load_spec(sys.argv[1], profile="smoke", overrides=sys.argv[3:])
    print("RUN_DIR", train(spec, out_dir=sys.argv[2]).run_dir)
    """
)
OVERRIDES = [
    "training.train_batch_size=500",
    "training.minibatch_size=250",
    "training.num_epochs=1",
    "stop.iterations=1",
    "logging.wandb=off",
    "resources.learners=1",
    "resources.gpus_per_learner=1",
    "resources.env_runners=1",
    "resources.custom_resources_per_learner={rlp_learner: 1}",
    "resources.custom_resources_per_env_runner={rlp_env_runner: 1}",
]


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.timeout(600)
def test_remote_learner_on_a_node_without_cuda_trains_on_cpu(tmp_path) -> None:
    spec = EXPERIMENTS / "cartpole_ppo.yaml"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(spec), str(tmp_path), *OVERRIDES],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = next(
        line.split(" ", 1)[1] for line in done.stdout.splitlines() if line.startswith("RUN_DIR")
    )
    log = (tmp_path / run_dir / "train.log").read_text()
    assert "learner device: cpu (no GPU on node" in log
    assert "nccl" not in log.lower()
