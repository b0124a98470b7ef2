"""The PPO loss (both modes) and the eager update: `num_epochs` passes over shuffled minibatches
of sequences, Adam and `clip_grad_norm_` as `torch.optim` and `torch.nn.utils` give them."""

import torch
from torch import nn

from benchmarks.plain_recipe.batch import STATE_IN
from benchmarks.plain_recipe.config import RecipeConfig
from benchmarks.plain_recipe.net import net_inputs

TERMS = ("loss_pg", "loss_vf", "loss_entropy", "entropy", "approx_kl", "max_abs_logratio")
"""What `ppo_loss` returns, in order (the captured update stacks them into one tensor)."""
FIRST_TERMS = ("max_abs_logratio", "approx_kl")
"""Reported as `first_*` from an update's first minibatch, before its first step."""


def masked_mean(x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    return (x * valid).sum() / valid.sum()


def ppo_loss(
    net: nn.Module, mb: dict[str, torch.Tensor], config: RecipeConfig
) -> dict[str, torch.Tensor]:
    """plain_torch_ppo.ppo_loss (RLlib's PPOTorchLearner) as means over real steps; keys
    starting with `loss_` sum to the total, the rest are diagnostics. Reads `seq_lens`
    (padded sequences) or `resets` (fixed ones) from the minibatch."""
    training, valid = config.training, mb["valid"]
    inputs = net_inputs(mb["obs"], config)
    state = {k.removeprefix(STATE_IN): v for k, v in mb.items() if k.startswith(STATE_IN)}
    embeddings, _ = net.encode(inputs, state, mb.get("seq_lens"), mb.get("resets"))
    logp_all = torch.log_softmax(net.policy(embeddings, None).float(), dim=-1)
    newlogp = logp_all.gather(-1, mb["actions"].unsqueeze(-1)).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    logratio = newlogp - mb["logp"]
    ratio = logratio.exp()
    clip = training.clip_param
    pg_loss1 = -mb["advantages"] * ratio
    pg_loss2 = -mb["advantages"] * torch.clamp(ratio, 1 - clip, 1 + clip)
    pg_loss = masked_mean(torch.max(pg_loss1, pg_loss2), valid)
    newvalue = net.critic(net.critic_observation(inputs))
    v_loss_unclipped = (newvalue - mb["value_targets"]) ** 2
    # RLlib clamps the squared error itself (vf_clip_param), not the value prediction.
    v_loss = masked_mean(torch.clamp(v_loss_unclipped, max=training.vf_clip_param), valid)
    entropy_loss = masked_mean(entropy, valid)
    with torch.no_grad():
        approx_kl = masked_mean((ratio - 1) - logratio, valid)
        max_abs_logratio = (logratio.abs() * valid).max()
    return {
        "loss_pg": pg_loss,
        "loss_vf": training.vf_loss_coeff * v_loss,
        "loss_entropy": -training.entropy_coeff * entropy_loss,
        "entropy": entropy_loss.detach(),
        "approx_kl": approx_kl,
        "max_abs_logratio": max_abs_logratio,
    }


def total_loss(terms: dict[str, torch.Tensor]) -> torch.Tensor:
    return sum(value for key, value in terms.items() if key.startswith("loss_"))


def update(
    net: nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: dict[str, torch.Tensor],
    config: RecipeConfig,
) -> dict[str, float]:
    """`num_epochs` passes over shuffled sequence minibatches (batch / minibatch of them).

    Returns the last minibatch's terms and, as `first_*`, the first minibatch's before any
    step: acting and learning then used the same weights, so logp_new == logp_old."""
    sequences, training = batch["seq_lens"].shape[0], config.training
    terms: dict[str, torch.Tensor] = {}
    first: dict[str, torch.Tensor] = {}
    for _ in range(training.num_epochs):
        order = torch.randperm(sequences, device=batch["seq_lens"].device)
        for index in order.tensor_split(config.minibatches):
            terms = ppo_loss(net, {key: value[index] for key, value in batch.items()}, config)
            first = first or {f"first_{k}": terms[k] for k in FIRST_TERMS}
            optimizer.zero_grad(set_to_none=True)
            total_loss(terms).backward()
            if training.grad_clip is not None:
                nn.utils.clip_grad_norm_(net.parameters(), training.grad_clip)
            optimizer.step()
    return {key: float(value.detach()) for key, value in (terms | first).items()}
