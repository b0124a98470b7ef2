"""Adam's step written with device tensors only, skipping itself on the device when the
gradients are not finite (pure torch; no host read, so a CUDA graph can hold it).

`torch.optim.Adam` without `capturable=True` reads its step counter on the host every step
(`_get_value(step)`), and `capturable=True` is refused on CPU tensors. This is the same update
(torch/optim/adam.py, `_multi_tensor_adam`: `exp_avg.lerp_(grad, 1 - beta1)`,
`exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)`, bias corrections from the step) on
the optimizer's own state (`exp_avg`, `exp_avg_sq`, `step`), so checkpoints keep
`torch.optim.Adam`'s format and either path can continue the other's run. `ok` (a 0-d 0/1
tensor) scales the whole step: with `ok = 0` the parameters, moments and the step counter stay
as they were, which is how a non-finite update is refused without asking the host.
"""

import torch

SUPPORTED = "Adam without weight decay, amsgrad or maximize"


def supports(optimizer: torch.optim.Optimizer) -> bool:
    """Whether `optimizer` is an Adam this step reproduces exactly."""
    if type(optimizer) is not torch.optim.Adam:
        return False
    return all(
        not group["amsgrad"] and not group["maximize"] and group["weight_decay"] == 0
        for group in optimizer.param_groups
    )


def prepare_state(optimizer: torch.optim.Adam) -> None:
    """Create the moments and a device step counter for parameters Adam has not stepped yet,
    and move existing counters to their parameter's device (a loaded checkpoint's are on CPU)."""
    for group in optimizer.param_groups:
        for param in group["params"]:
            state = optimizer.state[param]
            if not state:
                state["step"] = torch.zeros((), dtype=torch.float32, device=param.device)
                state["exp_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(param, memory_format=torch.preserve_format)
            elif state["step"].device != param.device:
                state["step"] = state["step"].to(param.device, torch.float32)


def adam_step(optimizer: torch.optim.Adam, *, ok: torch.Tensor, lr: torch.Tensor) -> None:
    """One Adam step of every parameter with a gradient, scaled by `ok` (0 or 1); `lr` is a
    0-d tensor on the parameters' device (read in place, so a captured step follows it)."""
    for group in optimizer.param_groups:
        beta1, beta2 = group["betas"]
        first_weight, second_weight = (1 - beta1) * ok, (1 - beta2) * ok
        for param in group["params"]:
            if param.grad is None:
                continue
            state = optimizer.state[param]
            grad = torch.where(ok > 0, param.grad, torch.zeros_like(param.grad))
            state["step"].add_(ok)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.add_((grad - exp_avg) * first_weight)  # lerp towards grad
            exp_avg_sq.mul_(1 - second_weight).add_(grad * grad * second_weight)
            # A counter still at 0 (every step so far refused) has nothing to correct.
            step = state["step"].clamp_min(1.0)
            bias_correction1 = 1 - beta1**step
            bias_correction2_sqrt = (1 - beta2**step).sqrt()
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
            param.data.sub_(exp_avg / denom * (ok * lr / bias_correction1))
