"""The written-out LSTM the array learner trains through (`LSTMCore` with `resets`) against
torch's own `nn.LSTM` (no Ray)."""

import torch

from rl_platform.nets.blocks import LSTMCore

TOL = {"atol": 1e-5, "rtol": 1e-5}


def test_without_resets_the_scan_equals_torchs_lstm() -> None:
    torch.manual_seed(0)
    core = LSTMCore(5, 7)
    x, h, c = torch.randn(3, 9, 5), torch.randn(3, 7), torch.randn(3, 7)
    want, (want_h, want_c) = core(x, (h, c))
    got, (got_h, got_c) = core(x, (h, c), resets=torch.zeros(3, 9, dtype=torch.bool))
    torch.testing.assert_close(got, want, **TOL)
    torch.testing.assert_close(got_h, want_h, **TOL)
    torch.testing.assert_close(got_c, want_c, **TOL)


def test_a_reset_restarts_from_zeros_and_the_gradient_stops_there() -> None:
    torch.manual_seed(1)
    core = LSTMCore(4, 6, skip=True)
    x = torch.randn(2, 8, 4, requires_grad=True)
    h, c = torch.randn(2, 6), torch.randn(2, 6)
    resets = torch.zeros(2, 8, dtype=torch.bool)
    resets[0, 3] = True
    out, _ = core(x, (h, c), resets=resets)
    before, _ = core(x[:1, :3], (h[:1], c[:1]))
    after, _ = core(x[:1, 3:], core.initial_state(1))
    torch.testing.assert_close(out[:1, :3], before, **TOL)
    torch.testing.assert_close(out[:1, 3:], after, **TOL)
    out[0, 3:].sum().backward()
    assert torch.all(x.grad[0, :3] == 0.0)  # nothing after the reset depends on what came before
    assert torch.any(x.grad[0, 3:] != 0.0)
