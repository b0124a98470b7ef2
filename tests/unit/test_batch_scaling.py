import pytest

from rl_platform.base.batch_scaling import auto_scale_batch


def test_small_batches_are_left_alone():
    scaled = auto_scale_batch(train_batch_size=4000, minibatch_size=128, num_epochs=10, lr=3e-4)
    assert not scaled.changed
    assert (scaled.minibatch_size, scaled.num_epochs, scaled.lr) == (128, 10, 3e-4)


def test_large_batch_keeps_minibatch_and_steps_near_targets():
    # 65536 / 8192 = 8 minibatches; 16 steps target -> 2 epochs; epochs fall: LR unchanged.
    scaled = auto_scale_batch(train_batch_size=65536, minibatch_size=128, num_epochs=10, lr=3e-4)
    assert (scaled.minibatch_size, scaled.num_epochs, scaled.grad_steps) == (8192, 2, 16)
    assert scaled.lr == pytest.approx(3e-4)


def test_more_epochs_scale_lr_down_in_proportion():
    # 16384 -> 2 minibatches of 8192; 16 / 2 = 8 epochs, 4x the spec's 2 -> LR / 4.
    scaled = auto_scale_batch(train_batch_size=16384, minibatch_size=512, num_epochs=2, lr=4e-4)
    assert (scaled.minibatch_size, scaled.num_epochs) == (8192, 8)
    assert scaled.lr == pytest.approx(1e-4)


def test_min_epochs_floor():
    scaled = auto_scale_batch(train_batch_size=8192 * 40, minibatch_size=512, num_epochs=4, lr=1e-3)
    assert scaled.num_epochs == 2 and scaled.minibatch_size == 8192
