"""The critic runs on the module's own steps only (#48): advantages and value targets from
values computed where the module played equal those from values of every row."""

import torch

from rl_platform.learners.flat_batch import flat_batch, values_of
from rl_platform.losses.gae import generalized_advantages, standardized
from rl_platform.sampling.rollout_batch import RolloutBatch
from tests.integration.test_array_learner import MODULE, OBS_DIM, _learner, _spec


def test_values_of_the_modules_own_steps_give_the_full_grids_advantages(ray_local) -> None:
    module = _learner(_spec()).module[MODULE]
    torch.manual_seed(0)
    steps, games = 10, 6
    # Two seats per game: seat 0 is the module's in games 0-3, the opponent's in games 4-5.
    valid = torch.zeros(steps, games * 2, dtype=torch.bool)
    valid[:, 0:8:2] = True
    ended = torch.zeros(steps, games * 2, dtype=torch.bool)
    ended[4, 0:2] = ended[6, 2:4] = True
    terminated = ended.clone()
    terminated[6, 2:4] = False  # truncated: its final observation bootstraps
    rollout = RolloutBatch(
        module_id=MODULE,
        obs=torch.randn(steps, games * 2, OBS_DIM),
        last_obs=torch.randn(games * 2, OBS_DIM),
        final_obs=torch.randn(steps, games * 2, OBS_DIM),
        actions=torch.zeros(steps, games * 2, dtype=torch.long),
        logp=torch.zeros(steps, games * 2),
        logits=torch.zeros(steps, games * 2, 4),
        rewards=torch.randn(steps, games * 2),
        terminated=terminated,
        ended=ended,
        valid=valid,
        num_env_steps=steps * games,
    )
    flat = flat_batch(module, rollout, gamma=0.9, lambda_=0.8)
    everywhere = values_of(module, rollout.obs.reshape(-1, OBS_DIM)).view(steps, -1)
    final = values_of(module, rollout.final_obs.reshape(-1, OBS_DIM)).view(steps, -1)
    next_values = torch.cat([everywhere[1:], values_of(module, rollout.last_obs)[None]])
    next_values = torch.where(ended & ~terminated, final, next_values)
    boundary = ended.clone()
    boundary[-1] = True
    advantages, targets = generalized_advantages(
        rewards=rollout.rewards,
        values=everywhere,
        next_values=next_values,
        terminated=terminated,
        boundary=boundary,
        gamma=0.9,
        lambda_=0.8,
    )
    index = valid.reshape(-1).nonzero()[:, 0]
    want = standardized(advantages, valid).reshape(-1)[index]
    torch.testing.assert_close(flat.advantages, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(flat.value_targets, targets.reshape(-1)[index], rtol=1e-5, atol=1e-5)
