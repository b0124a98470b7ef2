"""Batch auto-scaling (`training.auto_scale`): keep minibatch and gradient steps near targets.

Rule (docs/batch_scaling.md): for a train batch B larger than the target minibatch M, split B
into n = round(B / M) equal minibatches; run E = max(min_epochs, round(G / n)) epochs so that
E * n is near the target gradient steps G; when E exceeds the spec's epochs, scale the LR by
spec_epochs / E (twice the epochs -> half the LR), since each sample is then reused more often.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ScaledBatch:
    minibatch_size: int
    num_epochs: int
    lr: float
    grad_steps: int
    changed: bool


def auto_scale_batch(
    *,
    train_batch_size: int,
    minibatch_size: int,
    num_epochs: int,
    lr: float,
    target_minibatch: int = 8192,
    target_grad_steps: int = 16,
    min_epochs: int = 2,
) -> ScaledBatch:
    """Apply the rule above; small batches (B <= target minibatch) are left as specified."""
    if train_batch_size <= target_minibatch:
        steps = num_epochs * max(1, train_batch_size // minibatch_size)
        return ScaledBatch(minibatch_size, num_epochs, lr, steps, changed=False)
    num_minibatches = max(1, round(train_batch_size / target_minibatch))
    scaled_minibatch = train_batch_size // num_minibatches
    epochs = max(min_epochs, round(target_grad_steps / num_minibatches))
    scaled_lr = lr * num_epochs / epochs if epochs > num_epochs else lr
    return ScaledBatch(
        minibatch_size=scaled_minibatch,
        num_epochs=epochs,
        lr=scaled_lr,
        grad_steps=epochs * num_minibatches,
        changed=True,
    )
