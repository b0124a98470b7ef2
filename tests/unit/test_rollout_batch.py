"""`joined`: several runners' rollout batches of one module side by side (no Ray)."""

import torch

from rl_platform.sampling.rollout_batch import RolloutBatch, joined


def _batch(rows: int, *, fill: float, truncated: bool, states: bool) -> RolloutBatch:
    steps = 3
    flags = torch.zeros(steps, rows, dtype=torch.bool)
    return RolloutBatch(
        module_id="main",
        obs={"obs": torch.full((steps, rows, 2), fill)},
        last_obs={"obs": torch.full((rows, 2), fill + 0.5)},
        final_obs={"obs": torch.full((steps, rows, 2), -fill)} if truncated else None,
        actions=torch.zeros(steps, rows, dtype=torch.int64),
        logp=torch.full((steps, rows), fill),
        logits=torch.zeros(steps, rows, 4),
        rewards=torch.zeros(steps, rows),
        terminated=flags,
        ended=flags.clone(),
        valid=~flags,
        num_env_steps=steps * rows,
        state_in={"h": torch.full((1, rows, 5), fill)} if states else None,
        seq_len=3 if states else 0,
    )


def test_rows_are_side_by_side_and_env_steps_add_up() -> None:
    a, b = (
        _batch(2, fill=1.0, truncated=False, states=True),
        _batch(3, fill=2.0, truncated=True, states=True),
    )
    both = joined([a, b])
    assert both.obs["obs"].shape == (3, 5, 2) and both.logp.shape == (3, 5)
    assert torch.equal(both.logp[:, :2], a.logp) and torch.equal(both.logp[:, 2:], b.logp)
    assert torch.equal(both.last_obs["obs"][2:], b.last_obs["obs"])
    assert both.state_in["h"].shape == (1, 5, 5)
    assert both.num_env_steps == a.num_env_steps + b.num_env_steps
    # a's rows have no final observations (never read); b's are its own
    assert torch.equal(both.final_obs["obs"][:, 2:], b.final_obs["obs"])


def test_one_batch_is_itself_and_no_truncation_keeps_none() -> None:
    a = _batch(2, fill=1.0, truncated=False, states=False)
    assert joined([a]) is a
    both = joined([a, _batch(1, fill=3.0, truncated=False, states=False)])
    assert both.final_obs is None and both.state_in is None


def _tensors_of(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    return list(value.values()) if isinstance(value, dict) else []


def test_to_moves_every_tensor_field() -> None:
    """`to` derives its fields from the dataclass: a field added later moves too."""
    from dataclasses import fields

    batch = _batch(2, fill=1.0, truncated=True, states=True)
    batch.columns = {"teacher_actions": torch.zeros(3, 2)}
    moved = batch.to("meta")
    for f in fields(RolloutBatch):
        for tensor in _tensors_of(getattr(moved, f.name)):
            assert tensor.device.type == "meta", f.name
    assert (moved.module_id, moved.num_env_steps, moved.seq_len) == ("main", 6, 3)


def test_flat_batch_rows_take_every_field() -> None:
    from dataclasses import fields

    from rl_platform.learners.flat_batch import FlatBatch

    def column(width: int = 0) -> torch.Tensor:
        return torch.arange(4.0)[:, None].expand(4, width) if width else torch.arange(4.0)

    batch = FlatBatch(**{f.name: column() for f in fields(FlatBatch)})
    batch.obs, batch.state_in = {"obs": column(3)}, {"h": column(5)}
    picked = batch.rows(torch.tensor([3, 1]))
    for f in fields(FlatBatch):
        for tensor in _tensors_of(getattr(picked, f.name)):
            assert (tensor if tensor.dim() == 1 else tensor[:, 0]).tolist() == [3.0, 1.0], f.name
