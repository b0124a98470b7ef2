"""The aggregated-label replay (DAgger-style extra BC steps): the pure buffer, the BC-only batch
it yields, and the real `BCPPOLearner` doing `updates_per_minibatch` extra steps (no cluster)."""

import math

import pytest
import torch

from rl_platform.imitation.label_replay import LOSS_MASK, LabelReplay, as_bc_only_batch
from rl_platform.imitation.schedule import BCSettings
from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION, BCMode
from rl_platform.losses.bc import labelled_mask, ppo_loss_mask
from tests.unit.bc_learner_support import MODULE, bc_batch, build_bc_learner

T, S, P = BCMode.TEACHER_LED, BCMode.STUDENT_LED, BCMode.PLAIN


def _rows(values: list[float], labelled: list[bool]) -> tuple[dict, torch.Tensor]:
    obs = torch.tensor(values, dtype=torch.float32)
    columns = {
        "obs": {"x": obs[:, None], "mask": torch.ones(len(values), 2)},
        TEACHER_ACTION: torch.arange(len(values)),
    }
    return columns, torch.tensor(labelled)


def test_add_keeps_only_labelled_rows_and_samples_them():
    replay = LabelReplay(100, seed=0)
    columns, labelled = _rows([1.0, 2.0, 3.0, 4.0], [True, False, True, False])
    assert replay.add(columns, labelled=labelled) == 2
    assert len(replay) == 2 and replay.labelled_steps == 2
    sample = replay.sample(50)
    assert sample["obs"]["x"].shape == (50, 1) and sample["obs"]["mask"].shape == (50, 2)
    assert set(sample["obs"]["x"].flatten().tolist()) == {1.0, 3.0}
    # Rows stay aligned across columns: obs 1 had teacher action 0, obs 3 had 2.
    observed = sample["obs"]["x"].flatten().tolist()
    pairs = set(zip(observed, sample[TEACHER_ACTION].tolist(), strict=True))
    assert pairs == {(1.0, 0), (3.0, 2)}


def test_capacity_drops_the_oldest_rows():
    replay = LabelReplay(3, seed=0)
    for start in (0.0, 10.0):
        columns, labelled = _rows([start, start + 1, start + 2], [True, True, True])
        replay.add(columns, labelled=labelled)
    assert len(replay) == 3
    assert set(replay.sample(200)["obs"]["x"].flatten().tolist()) == {10.0, 11.0, 12.0}
    columns, labelled = _rows([float(v) for v in range(20, 30)], [True] * 10)
    replay.add(columns, labelled=labelled)  # more rows than fit: the newest 3
    assert set(replay.sample(200)["obs"]["x"].flatten().tolist()) == {27.0, 28.0, 29.0}
    replay.clear()
    assert len(replay) == 0
    with pytest.raises(ValueError, match="empty"):
        replay.sample(1)


def test_recurrent_rows_count_capacity_in_steps():
    # [B, T] chunks: capacity 10 steps with T = 4 holds ceil(10 / 4) = 3 rows.
    replay = LabelReplay(10, seed=0)
    obs = torch.arange(5 * 4, dtype=torch.float32).reshape(5, 4, 1)
    labelled = torch.tensor([[True, True, False, False]] * 4 + [[False] * 4])
    columns = {"obs": obs, "state_in": {"h": torch.arange(5.0)[:, None]}}
    assert replay.add(columns, labelled=labelled) == 3  # 4 rows kept, only the newest 3 fit
    assert replay.steps_per_row == 4 and len(replay) == 3
    assert replay.labelled_steps == 6
    sample = replay.sample(30)
    assert sample["obs"].shape == (30, 4, 1) and sample["labelled"].shape == (30, 4)
    assert set(sample["state_in"]["h"].flatten().tolist()) == {1.0, 2.0, 3.0}
    # The initial state travels with its chunk.
    assert torch.equal(sample["obs"][:, 0, 0], sample["state_in"]["h"][:, 0] * 4)


def test_bc_only_batch_enters_the_bc_term_and_never_ppo():
    sample = {
        "obs": torch.zeros(3, 2, 1),
        TEACHER_ACTION: torch.ones(3, 2, dtype=torch.long),
        "labelled": torch.tensor([[True, False], [True, True], [False, False]]),
    }
    batch = as_bc_only_batch(sample)
    assert "labelled" not in batch
    assert not bool(ppo_loss_mask(bc_mode=batch[BC_MODE], loss_mask=batch[LOSS_MASK]).any())
    bc = labelled_mask(bc_mode=batch[BC_MODE], loss_mask=batch[LOSS_MASK])
    assert bc.tolist() == sample["labelled"].tolist()


def test_loss_mask_name_is_rllibs():
    from ray.rllib.core.columns import Columns

    assert LOSS_MASK == Columns.LOSS_MASK


# ----- the real learner -------------------------------------------------------------------
@pytest.fixture
def learner():
    return build_bc_learner(
        bc={"coef": 0.7, "replay": {"capacity": 100, "updates_per_minibatch": 3}},
        training={"minibatch_size": 6, "train_batch_size": 12},
    )


def _record(learner, batch: dict) -> None:
    from rl_platform.connectors.label_recorder import LabelRecorder

    LabelRecorder(learner._record_labels)(rl_module=learner.module, batch={MODULE: batch})


def _count_steps(learner, monkeypatch) -> list[int]:
    steps: list[int] = []
    original = learner.apply_gradients

    def counting(gradients):
        steps.append(1)
        return original(gradients)

    monkeypatch.setattr(learner, "apply_gradients", counting)
    return steps


def test_learner_records_labelled_steps_and_adds_replay_steps(learner, monkeypatch):
    batch = bc_batch()
    _record(learner, batch)
    replay = learner._replays[MODULE]
    assert replay.labelled_steps == 8  # teacher- and student-led, not plain

    steps = _count_steps(learner, monkeypatch)
    learner._update({MODULE: batch})
    assert len(steps) == 1 + 3  # the PPO minibatch step, then 3 BC-only replay steps
    results = learner.metrics.reduce()
    assert math.isfinite(results[MODULE]["loss/bc_replay"].peek())
    assert results[MODULE]["bc/replay_steps"].peek() == 8

    # coef 0 (e.g. after the schedule's end): no replay steps, nothing recorded.
    learner.set_bc_settings(BCSettings(0, "scripted://cartpole/balance", 0.5, 0.5, 0.0, 10))
    steps.clear()
    learner._update({MODULE: batch})
    assert len(steps) == 1
    # A new curriculum phase (another teacher) empties the buffer.
    learner.set_bc_settings(BCSettings(1, "scripted://cartpole/balance", 0.5, 0.5, 0.7, 0))
    assert len(replay) == 0


def test_replay_loss_is_coef_times_cross_entropy_on_labelled_steps(learner):
    batch = bc_batch()
    _record(learner, batch)
    replayed = as_bc_only_batch(learner._replays[MODULE].sample(16))
    module = learner.module[MODULE]
    with torch.no_grad():
        fwd_out = module.forward_train(replayed)
        logp = torch.log_softmax(fwd_out["action_dist_inputs"], -1)
        expected = -logp.gather(1, replayed[TEACHER_ACTION][:, None]).mean().item()
        learner._replaying = True
        loss = learner.compute_loss_for_module(
            module_id=MODULE, config=learner.config, batch=replayed, fwd_out=fwd_out
        )
        learner._replaying = False
    assert float(loss) == pytest.approx(0.7 * expected, rel=1e-5)
