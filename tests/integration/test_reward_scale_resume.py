"""`training.normalize_rewards` survives a resume: the learner keeps `ScaleRewards`' running
return statistics in its state (rl_platform/learners/connector_state.py), so the checkpoint
holds them and `--resume` restores them; RLlib's `Learner.get_state` alone leaves the learner
connector out, and a resumed run rescaled its rewards from scratch."""

import pytest

from rl_platform import load_spec, train
from rl_platform.rllib.algorithm_state import ALGORITHM_PART
from rl_platform.run import loop
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from tests.conftest import EXPERIMENTS
from tests.reliability.support import TINY

SCALED = [*TINY, "training.normalize_rewards=true", "stop.iterations=2"]


def _returns(learner_group_state: dict) -> dict:
    return learner_group_state["learner"]["learner_connector"]["ScaleRewards"]["returns"]


def test_a_resume_continues_the_reward_scale_statistics(ray_local, tmp_path, monkeypatch):
    spec = load_spec(EXPERIMENTS / "cartpole_ppo.yaml", profile="smoke", overrides=SCALED)
    run_dir = train(spec, out_dir=tmp_path).run_dir
    latest = CheckpointStore(run_dir / "checkpoints").latest()
    saved = _returns(load_checkpoint(latest).parts[ALGORITHM_PART]["learner_group"])
    assert saved["count"] == pytest.approx(400, abs=10)  # every step of two 200-step batches
    restored: list[dict] = []
    restore = loop.restore_algorithm

    def spy(algo, checkpoint):
        iteration = restore(algo, checkpoint)
        restored.append(_returns(algo.learner_group.get_state()))
        return iteration

    monkeypatch.setattr(loop, "restore_algorithm", spy)
    resumed = load_spec(
        EXPERIMENTS / "cartpole_ppo.yaml", profile="smoke", overrides=[*SCALED, "stop.iterations=3"]
    )
    assert train(resumed, resume=run_dir).iterations == 3
    assert restored == [saved]
