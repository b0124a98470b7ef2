"""A learned policy: a rebuilt RLModule run with `forward_inference` under no_grad, on the CPU
or (`device="cuda"`, evaluation during a run that acts on the GPU) on the GPU, where the
recurrent states per key stay: a state of the reference recipe is ~356 KiB per game.

Does by hand what RLlib's default connector pipelines do on an env runner, for one batch:

* env -> module: stack observations; blank the features the run's spec hides from learned
  policies (`env.hide`, rl_platform/envs/hidden_view.py); normalise them with the
  checkpoint's statistics where the run had `env.observation_filter` (RLlib's `MeanStdFilter`,
  frozen: `observation_filter.py`); transformer_lstm runs then convert each observation into
  `{own obs, opponent history, mask}` (the `OpponentHistory` connector, one window per key);
  stateful modules get a time axis of 1 and their per-key `STATE_IN`;
* module -> env: greedy (the distribution's deterministic action) or sampled actions, then
  continuous actions are unsquashed from [-1, 1] to the env bounds (`normalize_actions`).
"""

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from rl_platform.envs.hidden_view import HiddenView
from rl_platform.policies.base import stack_rows
from rl_platform.policies.observation_filter import ObservationFilter
from rl_platform.policies.rebuild import RebuiltModule
from rl_platform.ray_runtime.rllib_internals import forward_without_mode_switch


def _to_tensor(tree: Any, *, time_axis: bool) -> Any:
    if isinstance(tree, Mapping):
        return {k: _to_tensor(v, time_axis=time_axis) for k, v in tree.items()}
    array = np.asarray(tree)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    tensor = torch.from_numpy(np.ascontiguousarray(array))
    return tensor.unsqueeze(1) if time_axis else tensor


def _on(tree: Any, device: torch.device) -> Any:
    if isinstance(tree, Mapping):
        return {k: _on(v, device) for k, v in tree.items()}
    return tree.to(device, non_blocking=True)


def _rows(tree: Any, n: int, *, keep_tensors: bool = False) -> list[Any]:
    """Split a batched (nested) tensor tree into `n` per-row numpy trees (tensor rows where
    `keep_tensors`: states that stay on the GPU)."""
    if isinstance(tree, Mapping):
        per_key = {k: _rows(v, n, keep_tensors=keep_tensors) for k, v in tree.items()}
        return [{k: per_key[k][i] for k in per_key} for i in range(n)]
    if keep_tensors and isinstance(tree, torch.Tensor):
        return list(tree.detach().unbind(0))
    array = tree.detach().cpu().numpy() if isinstance(tree, torch.Tensor) else np.asarray(tree)
    return [array[i] for i in range(n)]


def _stack_states(rows: Sequence[Any], device: torch.device) -> Any:
    """One batch of per-key states: numpy rows (CPU) or tensor rows (kept on the GPU)."""
    first = rows[0]
    if isinstance(first, Mapping):
        return {key: _stack_states([row[key] for row in rows], device) for key in first}
    if device.type == "cpu":
        return torch.from_numpy(np.stack([np.asarray(row) for row in rows]))
    return torch.stack([torch.as_tensor(row, device=device) for row in rows])


class ModulePolicy:
    """`Policy` over a `RebuiltModule`; see the module docstring."""

    def __init__(
        self,
        label: str,
        rebuilt: RebuiltModule,
        *,
        sample: bool,
        converter: Any | None = None,
        device: str = "cpu",
        view: HiddenView | None = None,
        observation_filter: ObservationFilter | None = None,
    ) -> None:
        """`view`: what the policy saw in training (`env.hide`), applied first;
        `observation_filter`: its run's filter, applied next (RLlib's order:
        `HideFeatures`, then `MeanStdFilter`), before `converter`."""
        self.label = label
        self.rebuilt = rebuilt
        self.device = torch.device(device)
        self.module = rebuilt.module.to(self.device)
        self.sample = sample
        self._converter = converter
        self._view = view
        self._filter = observation_filter
        self._stateful = bool(self.module.is_stateful())
        self._initial = self.module.get_initial_state() if self._stateful else None
        self._states: dict[Hashable, Any] = {}
        self._windows: dict[Hashable, tuple[np.ndarray, np.ndarray]] = {}

    def state(self, key: Hashable) -> Any | None:
        """The recurrent state kept for `key` (None: not seen yet, or forgotten)."""
        return self._states.get(key)

    def forget(self, keys: Iterable[Hashable]) -> None:
        for key in keys:
            self._states.pop(key, None)
            self._windows.pop(key, None)

    def reset_state(self, keys: Iterable[Hashable], *, entries: tuple[str, ...] = ("",)) -> None:
        """Put the recurrent state entries of `keys` whose names start with one of `entries`
        back to their initial values ("": every entry), keeping the others and the opponent
        history: a subclass that calls it after `act` gives a policy with part of its memory
        cut (benchmarks/common/style_arena.py). A stateless module has nothing to reset."""
        if self._initial is None:
            return
        for key in keys:
            state = self._states.get(key)
            if state is None:
                continue
            for name in state:
                if name.startswith(entries):
                    state[name] = np.asarray(self._initial[name])

    def act(self, obs: Any, rng: np.random.Generator, *, keys: Sequence[Hashable]) -> np.ndarray:
        if self._view is not None:
            obs = self._view.apply(obs)
        if self._filter is not None:
            obs = self._filter.apply(obs)
        if self._converter is not None:
            obs = self._convert(obs, keys)
        obs = _to_tensor(obs, time_axis=self._stateful)
        batch: dict[str, Any] = {"obs": _on(obs, self.device)}
        if self._stateful:
            states = [self._states.get(key, self._initial) for key in keys]
            batch["state_in"] = _stack_states(states, self.device)
        with torch.no_grad():
            # Not `forward_inference`: RLlib's TorchRLModule wraps it in `eval()`/`train()`,
            # which walk every submodule on each call (about as costly as a small MLP's
            # forward); a rebuilt module is in eval mode from `build_module` on.
            out = forward_without_mode_switch(self.module, batch, explore=False)
        if self._stateful:
            on_gpu = self.device.type != "cpu"
            rows = _rows(out["state_out"], len(keys), keep_tensors=on_gpu)
            for key, state in zip(keys, rows, strict=True):
                self._states[key] = state
        return self._actions(out)

    def _convert(self, obs: Any, keys: Sequence[Hashable]) -> Any:
        rows = _rows(obs, len(keys))
        converted = []
        for key, raw in zip(keys, rows, strict=True):
            out = self._converter.convert_observation(raw, previous=self._windows.get(key))
            self._windows[key] = (out["opponent_history"], out["history_mask"])
            converted.append(out)
        return stack_rows(converted)

    def _actions(self, out: dict[str, Any]) -> np.ndarray:
        if "actions" in out:  # e.g. DQN returns its greedy actions directly
            actions = out["actions"]
        else:
            logits = out["action_dist_inputs"]
            if self._stateful:
                logits = logits[:, 0]
            dist = self.module.get_inference_action_dist_cls().from_logits(logits)
            if not self.sample:
                dist = dist.to_deterministic()
            actions = dist.sample()
        actions = actions.detach().cpu().numpy() if isinstance(actions, torch.Tensor) else actions
        if self._stateful and actions.ndim > 1 and actions.shape[1] == 1 and "actions" in out:
            actions = actions[:, 0]
        return self._to_env(np.asarray(actions))

    def _to_env(self, actions: np.ndarray) -> np.ndarray:
        space = self.rebuilt.action_space
        if not isinstance(space, gym.spaces.Box):
            return actions.astype(np.int64)
        if self.rebuilt.normalize_actions and space.is_bounded():
            actions = space.low + (actions + 1.0) * (space.high - space.low) / 2.0
        if self.rebuilt.clip_actions or self.rebuilt.normalize_actions:
            actions = np.clip(actions, space.low, space.high)
        return actions.astype(space.dtype)
