"""`ArrayPPOLearner`: PPO updates straight from the array runner's `RolloutBatch`es.

RLlib's path from a sample to an update (ray/rllib/core/learner/learner.py, `update`) builds
episodes, runs the learner connector pipeline on the host (one artificial step per episode
chunk, GAE in numpy), wraps a `MultiAgentBatch`, slices minibatches from it and reads every
loss back to the host after each minibatch. This learner keeps the batch as the runner wrote
it, `[T, R]` tensors, and on the learner's device:

1. values of every step, the bootstrap observations and truncated games' final observations
   in one no-grad pass; GAE and the advantages' standardization (rl_platform/losses/gae.py);
2. the valid steps gathered once into a flat batch (the one host read of the update: its size);
3. per minibatch, one function (`UpdateStep`) over fixed shapes: gather by a device index,
   `forward_train`, the PPO terms (rl_platform/losses/ppo.py), backward, global-norm clip,
   Adam on device state with the step refused on the device when the gradients are not finite
   (rl_platform/learners/device_adam.py), metrics summed into one device tensor;
4. the sums read once and logged under RLlib's own result keys (`PPO_QUANTITIES` in
   rl_platform/base/metric_keys.py; means over the minibatches; the KL as RLlib logs it, the
   last minibatch's, since RLlib's `after_gradient_based_update` adapts the KL coefficient to
   that value), then that method (learning-rate and entropy schedules, KL coefficient).

Anything else (episodes from RLlib's runner, evaluation samples) takes RLlib's path: this
class is still RLlib's `PPOTorchLearner` with our diagnostics (`PlatformPPOLearner`), so the
Algorithm, Tune, checkpoints and the `rlp` commands see no difference. The minibatch order
follows RLlib's `MiniBatchCyclicIterator`: a stream of per-epoch permutations cut into
`minibatch_size` pieces until `num_epochs` passes are covered.
"""

import math
from collections.abc import Mapping
from typing import Any

import torch
from ray.rllib.algorithms.ppo.ppo import LEARNER_RESULTS_KL_KEY
from ray.rllib.core import ALL_MODULES
from ray.rllib.core.learner.learner import Learner
from ray.rllib.utils.annotations import override
from ray.rllib.utils.metrics import (
    MODULE_TRAIN_BATCH_SIZE_MEAN,
    NUM_ENV_STEPS_TRAINED,
    NUM_ENV_STEPS_TRAINED_LIFETIME,
    NUM_MODULE_STEPS_TRAINED,
    NUM_MODULE_STEPS_TRAINED_LIFETIME,
    WEIGHTS_SEQ_NO,
)

from rl_platform.learners import CAPTURE_UPDATE_KEY, DECOUPLED_KEY, HEALTH_NONFINITE_KEY
from rl_platform.learners.captured_step import CapturedStep
from rl_platform.learners.flat_batch import FlatBatch, flat_batch, with_proximal_policy
from rl_platform.learners.ppo import PlatformPPOLearner
from rl_platform.learners.update_step import NONFINITE, StepSettings, UpdateStep
from rl_platform.sampling.rollout_batch import RolloutBatch, joined

KL_KEY = LEARNER_RESULTS_KL_KEY
LAST_KL = "last/mean_kl_loss"
"""`train_minibatches`' key of the last minibatch's KL."""


def minibatch_order(size: int, *, minibatch_size: int, num_epochs: int, shuffle: bool, device):
    """`[K, minibatch_size]` indices into a batch of `size` steps: RLlib's cyclic iterator's
    order (module docstring), K = ceil(num_epochs * size / minibatch_size)."""
    count = math.ceil(num_epochs * size / minibatch_size)
    passes = math.ceil(count * minibatch_size / size)
    orders = [
        torch.randperm(size, device=device) if shuffle else torch.arange(size, device=device)
        for _ in range(passes)
    ]
    return torch.cat(orders)[: count * minibatch_size].view(count, minibatch_size)


def _rollouts(episodes: Any) -> list[RolloutBatch] | None:
    if episodes and all(isinstance(item, RolloutBatch) for item in episodes):
        return list(episodes)
    return None


class ArrayPPOLearner(PlatformPPOLearner):
    """See the module docstring."""

    @override(PlatformPPOLearner)
    def build(self) -> None:
        super().build()
        self._captured: dict[str, CapturedStep] = {}

    @override(Learner)
    def update(self, *args: Any, training_data: Any = None, episodes: Any = None, **kwargs):
        data = training_data.episodes if training_data is not None else episodes
        rollouts = _rollouts(data)
        if rollouts is None:
            return super().update(*args, training_data=training_data, episodes=episodes, **kwargs)
        return self.update_from_rollouts(
            rollouts,
            timesteps=kwargs.get("timesteps") or {},
            num_epochs=int(kwargs.get("num_epochs", 1)),
            minibatch_size=kwargs.get("minibatch_size"),
            shuffle=bool(kwargs.get("shuffle_batch_per_epoch", False)),
        )

    def update_from_rollouts(
        self,
        rollouts: list[RolloutBatch],
        *,
        timesteps: Mapping[str, Any],
        num_epochs: int,
        minibatch_size: int | None,
        shuffle: bool,
    ) -> Any:
        """One PPO update from the runners' batches (module docstring); RLlib's result dict."""
        self._check_is_built()
        self.before_gradient_based_update(timesteps=dict(timesteps))
        self._weights_seq_no += 1
        for module_id, parts in _by_module(rollouts).items():
            if module_id not in self.module or not self.should_module_be_updated(module_id):
                continue
            flat = self.flat_batch(module_id, parts)
            if flat.size == 0:  # the module played no game of this batch: nothing to learn
                continue
            size, per_row = flat.size, flat.steps_per_row
            rows = max(1, (minibatch_size or size * per_row) // per_row)
            if self.config.learner_config_dict.get(DECOUPLED_KEY, False):
                flat = with_proximal_policy(self.module[module_id], flat, rows=rows)
            order = minibatch_order(
                size,
                minibatch_size=min(rows, size),
                num_epochs=num_epochs,
                shuffle=shuffle,
                device=self._device,
            )
            sums = self.train_minibatches(module_id, flat, order)
            env_steps = sum(part.env_steps() for part in parts)
            self._log_update(
                module_id,
                sums,
                steps=order.numel() * per_row,
                count=len(order),
                env_steps=env_steps * num_epochs,
            )
        self.after_gradient_based_update(timesteps=dict(timesteps))
        return self.metrics.reduce()

    def flat_batch(self, module_id: str, parts: list[RolloutBatch]) -> FlatBatch:
        """Values, GAE and the flat batch of valid steps for one module's rollouts."""
        config = self.config.get_config_for_module(module_id)
        rollout = joined(parts).to(self._device)
        return flat_batch(
            self.module[module_id], rollout, gamma=config.gamma, lambda_=config.lambda_
        )

    def train_minibatches(
        self, module_id: str, flat: FlatBatch, order: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        """Every minibatch step of `order` on `flat`; each metric's sum over them, on the
        device (`UpdateStep.metric_keys`), and the last step's KL under `LAST_KL`."""
        step = self._update_step(module_id)
        keys = (step.step if isinstance(step, CapturedStep) else step).metric_keys
        sums = torch.zeros(len(keys), device=self._device)
        last = sums
        for index in order:
            last = step(flat, index)
            sums += last
        return dict(zip(keys, sums, strict=True)) | {LAST_KL: last[keys.index(KL_KEY)]}

    def _update_step(self, module_id: str) -> UpdateStep | CapturedStep:
        """The module's step: captured as a CUDA graph on CUDA unless the spec says
        `resources.cuda_graphs: false` (learners/captured_step.py), else eager."""
        step = self._eager_step(module_id)
        if self._device.type != "cuda" or not self.config.learner_config_dict.get(
            CAPTURE_UPDATE_KEY, True
        ):
            return step
        captured = self._captured.get(module_id)
        if captured is None or list(map(id, captured.step.params)) != list(map(id, step.params)):
            captured = self._captured[module_id] = CapturedStep(step)
        else:
            captured.step.take_schedules(step)  # learning rate and entropy move between updates
        return captured

    def _eager_step(self, module_id: str) -> UpdateStep:
        config = self.config.get_config_for_module(module_id)
        optimizers = [opt for _, opt in self.get_optimizers_for_module(module_id)]
        settings = StepSettings(
            clip_param=config.clip_param,
            vf_clip_param=config.vf_clip_param,
            vf_loss_coeff=config.vf_loss_coeff,
            entropy_coeff=float(
                self.entropy_coeff_schedulers_per_module[module_id].get_current_value()
            ),
            kl_coeff=self.curr_kl_coeffs_per_module[module_id] if config.use_kl_loss else None,
            grad_clip=config.grad_clip,
        )
        return UpdateStep(
            self.module[module_id],
            optimizers,
            settings,
            device=self._device,
            bc_coef=self.bc_coef(module_id),
        )

    def bc_coef(self, module_id: str) -> float | None:
        """BC's weight for this module's steps; None: the step has no BC term (a subclass
        with `bc:` says otherwise, learners/array_bc_ppo.py)."""
        return None

    def _log_update(
        self,
        module_id: str,
        sums: dict[str, torch.Tensor],
        *,
        steps: int,
        count: int,
        env_steps: int,
    ) -> None:
        """The update's metrics under RLlib's keys: means over its `count` minibatches of
        `steps` steps in all; one host read."""
        sums = dict(sums)
        last_kl = float(sums.pop(LAST_KL))
        means = (torch.stack(list(sums.values())) / count).tolist()
        values = dict(zip(sums, means, strict=True))
        # RLlib logs its last minibatch's KL, and adapts the KL coefficient to it
        # (PPOLearner.after_gradient_based_update): so does this learner.
        values[KL_KEY] = last_kl
        skipped = values.pop(NONFINITE)
        self.metrics.log_dict(values, key=module_id, window=1)
        self.metrics.log_value(
            (ALL_MODULES, HEALTH_NONFINITE_KEY), float(skipped > 0), reduce="max", window=1
        )
        trained = steps
        self.metrics.log_value((module_id, WEIGHTS_SEQ_NO), self._weights_seq_no, window=1)
        self.metrics.log_value(
            (module_id, MODULE_TRAIN_BATCH_SIZE_MEAN), steps // count, reduce="mean"
        )
        counters = (
            (NUM_MODULE_STEPS_TRAINED, "sum"),
            (NUM_MODULE_STEPS_TRAINED_LIFETIME, "lifetime_sum"),
        )
        for key, reduce in counters:
            self.metrics.log_value((module_id, key), trained, reduce=reduce)
            self.metrics.log_value((ALL_MODULES, key), trained, reduce=reduce)
        self.metrics.log_value((ALL_MODULES, NUM_ENV_STEPS_TRAINED), env_steps, reduce="sum")
        self.metrics.log_value(
            (ALL_MODULES, NUM_ENV_STEPS_TRAINED_LIFETIME), env_steps, reduce="lifetime_sum"
        )


def _by_module(rollouts: list[RolloutBatch]) -> dict[str, list[RolloutBatch]]:
    grouped: dict[str, list[RolloutBatch]] = {}
    for rollout in rollouts:
        grouped.setdefault(rollout.module_id, []).append(rollout)
    return grouped
