"""The KL coefficient adapts as on RLlib's path (#48): RLlib's PPO logs its last minibatch's
KL and `after_gradient_based_update` adapts the coefficient to it; the array learner logs
the same value (not the update's mean), so both coefficients move alike."""

import torch
from ray.rllib.core.columns import Columns

from rl_platform.learners.array_ppo import KL_KEY, minibatch_order
from tests.integration.test_array_learner import MODULE, _batch, _sample_batch, _spec, _twins


def test_the_logged_kl_is_rllibs_last_minibatch_kl(ray_local) -> None:
    ours, rllibs = _twins(_spec(lr=3e-3))
    flat = _batch(64, seed=21)
    with torch.no_grad():  # acted by the learner's own policy: the KL starts at 0 and grows
        logits = ours.module[MODULE].forward_train({Columns.OBS: flat.obs})[
            Columns.ACTION_DIST_INPUTS
        ]
    flat.logits = logits.float()
    flat.logp = torch.log_softmax(flat.logits, -1).gather(-1, flat.actions[:, None])[:, 0]
    order = minibatch_order(64, minibatch_size=16, num_epochs=2, shuffle=False, device="cpu")
    sums = ours.train_minibatches(MODULE, flat, order)
    ours._log_update(MODULE, sums, steps=order.numel(), count=len(order), env_steps=64)
    mine = ours.metrics.reduce()[MODULE][KL_KEY]
    theirs = rllibs.update(
        batch=_sample_batch(flat),
        minibatch_size=16,
        num_epochs=2,
        shuffle_batch_per_epoch=False,
        timesteps={},
    )[MODULE][KL_KEY]
    mean_kl = float(sums[KL_KEY]) / len(order)
    assert float(theirs) > 1.5 * mean_kl, "the test's KL must grow over the update"
    torch.testing.assert_close(
        torch.tensor(float(mine)), torch.tensor(float(theirs)), rtol=1e-4, atol=1e-7
    )
