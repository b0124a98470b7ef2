"""Acting for all the seats a torch module plays, on its device, as one call (RLlib adapter).

The array runner's torch modules act here, on the CPU or on the GPU
(`resources.acting_device`). What a step of one module does:

1. the model inputs of every seat are uploaded once per step into a flat device buffer
   `[N * P + 1, ...]` (`ActingBuffers.load`; the last row is spare, see `SeatStates`);
2. the module's rows are gathered from it by index, with their recurrent states
   (`SeatStates`), and the module's `_forward_exploration` / `_forward_inference` runs on them
   (RLlib's own forward, with a time axis of 1 for recurrent modules, as
   AddTimeDimToBatchAndZeroPad gives them on env runners);
3. actions are drawn from the categorical logits on the device; the new states are written
   back by index; logits, log-probabilities and actions come back in one small copy.

On CUDA (`graphs=True`) step 2-3 is captured as a CUDA graph per module, batch size (padded up
to a power of two, padding rows point at the spare row) and exploration flag, and replayed:
one launch per module and step instead of hundreds of kernel launches from Python. A graph
reads the module's parameters where they live, so weights loaded in place (RLlib's
`set_state`, the league's slot reloads) take effect at the next replay; a module whose
parameters moved (a new module object) is captured again.

The side-stream warm-up, the capacity and the give-up are rl_platform/utils/cuda_graphs.py's,
which the array learner's captured update step uses too: a module whose step cannot be
captured acts eagerly from then on (one warning in the log), and an out-of-memory error inside
the capture propagates to the run's message.

On the CPU, and wherever `graphs=False`, the same function runs eagerly over the exact rows:
the same computation as the per-module numpy path it replaced (tests/acting_support.py keeps
that path as the reference; tests/integration/test_device_acting.py).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import tree
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical

from rl_platform.env_runner.module_actions import PolicyOutput
from rl_platform.envs.vector_game import Observations
from rl_platform.ray_runtime.rllib_internals import forward_without_mode_switch
from rl_platform.sampling.seat_states import SeatStates
from rl_platform.utils.cuda_graphs import GraphCapture, capacity

MIN_CAPACITY = 8
"""Smallest padded batch a graph is captured for (fewer graphs for tiny batches)."""
WARMUP = 2
"""Calls on a side stream before each capture (lazy initializations happen there)."""


class ActingBuffers:
    """Model inputs of every seat and the seats' recurrent states, on one device."""

    def __init__(
        self,
        *,
        num_games: int,
        num_seats: int,
        device: torch.device,
        initial_state: dict[str, np.ndarray] | None,
    ) -> None:
        self.num_games, self.num_seats, self.device = num_games, num_seats, device
        self.trash = num_games * num_seats
        self.states = (
            None
            if initial_state is None
            else SeatStates(initial_state, num_games=num_games, num_seats=num_seats, device=device)
        )
        self.obs: Any = None

    def load(self, model_obs: Observations) -> None:
        """This step's model inputs `[N, P, ...]` (array or dict of arrays) onto the device,
        into buffers allocated at the first step (captured graphs read them in place)."""
        rows = self.trash
        host = tree.map_structure(
            lambda v: torch.from_numpy(np.ascontiguousarray(v).reshape(rows, *v.shape[2:])),
            model_obs,
        )
        if self.obs is None:
            self.obs = tree.map_structure(
                lambda h: torch.zeros((rows + 1, *h.shape[1:]), dtype=h.dtype, device=self.device),
                host,
            )
        tree.map_structure(lambda buffer, h: buffer[:rows].copy_(h), self.obs, host)


def act_rows(module: Any, buffers: ActingBuffers, index: torch.Tensor, *, explore: bool):
    """One step of `module` for flat rows `index`: `[B, 2A + 1]` (logits, log-probs, action).

    Capturable: no host synchronization, fixed shapes for a fixed `index` length."""
    obs = tree.map_structure(lambda buffer: buffer.index_select(0, index), buffers.obs)
    states = buffers.states
    if states is None:
        batch = {Columns.OBS: obs}
    else:
        state_in = states.gather(index)
        batch = {
            Columns.OBS: tree.map_structure(lambda x: x[:, None], obs),
            Columns.STATE_IN: state_in,
        }
    # Not RLlib's public wrappers, which toggle eval()/train() on every call: the runner keeps
    # its modules in eval mode (module_actions.eval_mode).
    out = forward_without_mode_switch(module, batch, explore=explore)
    logits = out[Columns.ACTION_DIST_INPUTS].float()
    if states is not None:
        logits = logits[:, 0]
        states.step(index, state_in, out[Columns.STATE_OUT])
    log_probs = torch.log_softmax(logits, dim=-1)
    if explore:  # one draw per row by inverting the CDF (several times faster than multinomial)
        cdf = log_probs.exp().cumsum(dim=-1)
        u = torch.rand(cdf.shape[0], 1, device=cdf.device) * cdf[:, -1:]
        actions = torch.searchsorted(cdf, u, right=True)[:, 0].clamp_(max=cdf.shape[-1] - 1)
    else:
        actions = logits.argmax(dim=-1)
    return torch.cat([logits, log_probs, actions[:, None].to(logits.dtype)], dim=-1)


@dataclass
class _Graph:
    graph: torch.cuda.CUDAGraph
    index: torch.Tensor
    """[capacity] flat rows; padding rows hold the spare row."""
    host_index: torch.Tensor
    """The same, pinned on the host."""
    out: torch.Tensor


class ModuleActing:
    """Acts for the rows one torch module plays (module docstring)."""

    def __init__(self, module: Any, buffers: ActingBuffers, *, graphs: bool, pool: Any = None):
        self.module, self.buffers = module, buffers
        self.graphs = GraphCapture(
            f"the acting step of {type(module).__name__}",
            enabled=graphs and buffers.device.type == "cuda",
            warmup=WARMUP,
            pool=pool,
        )
        self._captured: dict[tuple[int, bool], _Graph] = {}
        self._params = self._param_pointers()
        categorical = module.get_exploration_action_dist_cls() is TorchCategorical
        if not categorical:
            raise ValueError(
                f"{type(module).__name__} acts through {module.get_exploration_action_dist_cls()}"
                "; the array runner samples categorical (Discrete) actions only"
            )

    def _param_pointers(self) -> tuple[int, ...]:
        return tuple(p.data_ptr() for p in self.module.parameters())

    def act(self, rows: np.ndarray, *, explore: bool) -> PolicyOutput:
        """Actions, logits and log-probabilities of flat rows `rows`; states advance."""
        packed = self._replay(rows, explore=explore) if self.graphs.enabled else None
        if packed is None:
            index = torch.as_tensor(rows, device=self.buffers.device)
            with torch.no_grad():
                packed = act_rows(self.module, self.buffers, index, explore=explore).cpu()
        width = (packed.shape[1] - 1) // 2
        return PolicyOutput(
            actions=packed[:, -1].numpy().astype(np.int64),
            logits=packed[:, :width],
            log_probs=packed[:, width : 2 * width],
        )

    def _replay(self, rows: np.ndarray, *, explore: bool) -> torch.Tensor | None:
        """The captured step's output for `rows`; None if this module cannot be captured
        (then it acts eagerly from now on, which the log says once)."""
        if self._params != self._param_pointers():  # a new module object: capture anew
            self._captured.clear()
            self._params = self._param_pointers()
        key = (capacity(len(rows), minimum=MIN_CAPACITY), explore)
        graph = self._captured.get(key)
        if graph is None:
            graph = self._capture(key[0], explore=explore)
            if graph is None:
                torch.cuda.synchronize(self.buffers.device)
                return None
            self._captured[key] = graph
        graph.host_index.fill_(self.buffers.trash)
        graph.host_index[: len(rows)] = torch.from_numpy(np.asarray(rows, np.int64))
        graph.index.copy_(graph.host_index, non_blocking=True)
        graph.graph.replay()
        return graph.out[: len(rows)].cpu()

    def _capture(self, rows: int, *, explore: bool) -> _Graph | None:
        device = self.buffers.device
        index = torch.full((rows,), self.buffers.trash, dtype=torch.int64, device=device)

        def step() -> torch.Tensor:
            with torch.no_grad():
                return act_rows(self.module, self.buffers, index, explore=explore)

        recorded = self.graphs.record(step, device=device, rows=rows)
        if recorded is None:
            return None
        graph, out = recorded
        host_index = torch.empty(rows, dtype=torch.int64).pin_memory()
        return _Graph(graph=graph, index=index, host_index=host_index, out=out)


class SeatActing:
    """Everything a runner acts with: the buffers and one `ModuleActing` per torch module.

    Kept across the runner's resets (captured graphs point into the buffers); `prepare`
    restarts the states and adds actors for modules it has not seen."""

    def __init__(self, *, num_games: int, num_seats: int, device: str, graphs: bool) -> None:
        self.shape = {"num_games": num_games, "num_seats": num_seats}
        self.device = torch.device(device)
        self.graphs = graphs and self.device.type == "cuda"
        self.buffers: ActingBuffers | None = None
        self.actors: dict[str, ModuleActing] = {}
        self._pool = torch.cuda.graph_pool_handle() if self.graphs else None

    def prepare(self, modules: Mapping[str, Any], *, main: str) -> SeatStates | None:
        """Buffers for `main`'s state layout (every module of a run shares it), every game's
        states restarted, an actor per torch module; returns the states (None: stateless)."""
        main_module = modules[main]
        if self.buffers is None:
            stateful = hasattr(main_module, "is_stateful") and main_module.is_stateful()
            initial = main_module.get_initial_state() if stateful else None
            self.buffers = ActingBuffers(**self.shape, device=self.device, initial_state=initial)
        for module_id, module in modules.items():
            known = self.actors.get(module_id)
            if isinstance(module, torch.nn.Module) and (
                known is None or known.module is not module
            ):
                self.actors[module_id] = ModuleActing(
                    module, self.buffers, graphs=self.graphs, pool=self._pool
                )
        states = self.buffers.states
        if states is not None:
            states.restart(np.arange(self.shape["num_games"]))
        return states

    def load(self, model_obs: Observations) -> None:
        if self.actors:
            assert self.buffers is not None
            self.buffers.load(model_obs)

    def act(self, module_id: str, rows: np.ndarray, *, explore: bool) -> PolicyOutput:
        return self.actors[module_id].act(rows, explore=explore)
