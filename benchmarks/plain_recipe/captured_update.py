"""The update with each minibatch step replayed as one CUDA graph (the captured mode's learner).

What a careful user of plain PyTorch writes from PyTorch's "whole-network capture" notes
(docs/source/notes/cuda.rst) and LeanRL (pytorch-labs/LeanRL, ppo_atari_envpool_torchcompile.py):

* the batch of `prepare_fixed_batch` ([N games, T frames], `resets` for the game starts) is
  copied into static device tensors once per iteration;
* `step(index)` gathers a minibatch of games by a device index, runs forward, loss, backward,
  `clip_grad_norm_` (which scales by a clamped coefficient instead of asking the host) and
  `Adam(capturable=True)` with the learning rate as a device tensor: nothing in it reads a
  value on the host, and every shape in it is fixed;
* per minibatch shape (at most two: `tensor_split` of the games), `WARMUP` real steps run
  eagerly on a side stream (Adam creates its state and the libraries initialise lazily there),
  the gradients are set to None so that the capture allocates them from the graph's own pool,
  the step is captured, and every later minibatch of that shape is a replay; the shuffle
  (`randperm`) runs outside, on the device;
* each step's terms come back as one stacked tensor; the first minibatch's is cloned on the
  device, and the host reads both once, at the end of the update.

On the CPU (tests only; the command refuses `--captured` there) the same step runs eagerly, with
a plain Adam (`capturable=True` is for CUDA tensors).
"""

from collections import Counter
from dataclasses import dataclass

import torch
from torch import nn

from benchmarks.plain_recipe.config import RecipeConfig
from benchmarks.plain_recipe.learning import FIRST_TERMS, TERMS, ppo_loss, total_loss

WARMUP = 2
"""Eager steps on a side stream before a minibatch shape is captured (real steps)."""


@dataclass(frozen=True)
class _Graph:
    graph: torch.cuda.CUDAGraph
    index: torch.Tensor
    """The static minibatch index the graph gathers by."""
    out: torch.Tensor
    """The step's stacked terms, rewritten by each replay."""


class CapturedUpdate:
    """`num_epochs` passes over shuffled minibatches of games; steps as graphs on CUDA."""

    def __init__(self, net: nn.Module, config: RecipeConfig) -> None:
        self.net, self.config, self.device = net, config, torch.device(config.device)
        self.graphs_on = self.device.type == "cuda"
        lr = config.training.lr
        self.optimizer = (
            torch.optim.Adam(
                net.parameters(), lr=torch.tensor(lr, device=self.device), capturable=True
            )
            if self.graphs_on
            else torch.optim.Adam(net.parameters(), lr=lr)
        )
        self.static: dict[str, torch.Tensor] = {}
        self.graphs: dict[int, _Graph] = {}
        self.eager_steps: Counter[int] = Counter()

    def __call__(self, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        """Returns what `learning.update` returns (its keys, same meaning)."""
        self.load(batch)
        games = self.config.num_games
        first = out = None
        for _ in range(self.config.training.num_epochs):
            order = torch.randperm(games, device=self.device)
            for index in order.tensor_split(min(self.config.minibatches, games)):
                out = self._run(index)
                if first is None:
                    first = out.clone()
        last, head = torch.stack([out, first]).tolist()  # the update's one host read
        return dict(zip(TERMS, last, strict=True)) | {
            f"first_{key}": head[TERMS.index(key)] for key in FIRST_TERMS
        }

    def load(self, batch: dict[str, torch.Tensor]) -> None:
        """`batch` into the static tensors the graphs read (allocated at the first call)."""
        for key, value in batch.items():
            if key not in self.static:
                self.static[key] = torch.empty(value.shape, dtype=value.dtype, device=self.device)
            self.static[key].copy_(value)

    def backward(self, index: torch.Tensor) -> torch.Tensor:
        """Gather -> forward -> loss -> backward -> clip; the terms [len(TERMS)]. No host read."""
        terms = ppo_loss(self.net, {k: v[index] for k, v in self.static.items()}, self.config)
        self.optimizer.zero_grad(set_to_none=True)
        total_loss(terms).backward()
        if self.config.training.grad_clip is not None:
            nn.utils.clip_grad_norm_(self.net.parameters(), self.config.training.grad_clip)
        return torch.stack([terms[key].detach() for key in TERMS])

    def step(self, index: torch.Tensor) -> torch.Tensor:
        """One minibatch step: `backward`, then Adam."""
        out = self.backward(index)
        self.optimizer.step()
        return out

    def _run(self, index: torch.Tensor) -> torch.Tensor:
        if not self.graphs_on:
            return self.step(index)
        size = index.shape[0]
        captured = self.graphs.get(size)
        if captured is not None:
            captured.index.copy_(index)
            captured.graph.replay()
            return captured.out
        if self.eager_steps[size] < WARMUP:
            self.eager_steps[size] += 1
            return self._on_side_stream(index)
        return self._capture(index)

    def _on_side_stream(self, index: torch.Tensor) -> torch.Tensor:
        current = torch.cuda.current_stream(self.device)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(current)
        with torch.cuda.stream(side):
            out = self.step(index)
        current.wait_stream(side)
        return out

    def _capture(self, index: torch.Tensor) -> torch.Tensor:
        static_index = index.clone()
        self.optimizer.zero_grad(set_to_none=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = self.step(static_index)
        self.graphs[index.shape[0]] = _Graph(graph=graph, index=static_index, out=out)
        graph.replay()  # the capture recorded the step without running it
        return out
