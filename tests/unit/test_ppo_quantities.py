"""One name per PPO quantity per stage (`PPO_QUANTITIES`, rl_platform/base/metric_keys.py):
`ppo_loss` emits each once, the learners' result keys are RLlib's own names, and the run's
metric keys are unique and keep to the `loss/` and `train/` namespaces."""

import torch
from ray.rllib.algorithms.ppo.ppo import (
    LEARNER_RESULTS_KL_KEY,
    LEARNER_RESULTS_VF_EXPLAINED_VAR_KEY,
    LEARNER_RESULTS_VF_LOSS_UNCLIPPED_KEY,
)
from ray.rllib.core.learner.learner import ENTROPY_KEY, POLICY_LOSS_KEY, VF_LOSS_KEY, Learner

from rl_platform.base import metric_keys as keys
from rl_platform.losses.ppo import ppo_loss
from rl_platform.run.metrics import CUSTOM_PREFIXES
from tests.unit.test_ppo_terms import _inputs


def test_the_result_keys_are_the_ones_rllibs_ppo_learner_logs() -> None:
    assert keys.POLICY_LOSS.result_key == POLICY_LOSS_KEY
    assert keys.VALUE_LOSS.result_key == VF_LOSS_KEY
    assert keys.VALUE_LOSS_UNCLIPPED.result_key == LEARNER_RESULTS_VF_LOSS_UNCLIPPED_KEY
    assert keys.KL_LOSS.result_key == LEARNER_RESULTS_KL_KEY
    assert keys.TOTAL_LOSS.result_key == Learner.TOTAL_LOSS_KEY
    assert keys.ENTROPY.result_key == ENTROPY_KEY
    assert keys.VF_EXPLAINED_VAR.result_key == LEARNER_RESULTS_VF_EXPLAINED_VAR_KEY


def test_each_quantity_has_one_metric_key_in_the_runs_namespaces() -> None:
    metrics = [q.metric for q in keys.PPO_QUANTITIES if q.metric is not None]
    assert len(set(metrics)) == len(metrics)
    assert len({q.result_key for q in keys.PPO_QUANTITIES}) == len(keys.PPO_QUANTITIES)
    assert all(m.startswith(("loss/", "train/")) and m.startswith(CUSTOM_PREFIXES) for m in metrics)


def test_ppo_loss_emits_each_quantity_once() -> None:
    """Every quantity `ppo_loss` computes (all but the learner's total), and the `loss_*`
    terms it sums; nothing twice under two names (`policy_loss` beside `loss_policy`)."""
    terms = ppo_loss(**_inputs(old_logits=torch.zeros(3, 2), kl_coeff=0.2))
    quantities = {q.term for q in keys.PPO_QUANTITIES} - {keys.TOTAL_LOSS.term}
    summed = {"loss_policy", "loss_value", "loss_entropy", "loss_kl"}
    assert set(terms) == quantities | summed
