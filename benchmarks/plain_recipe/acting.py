"""Main's and the snapshots' forwards of one frame: eager (the floor) or as CUDA graphs (the bar).

Both keep every recurrent state (LSTM + key/value cache) on the device in preallocated
[games, ...] buffers, reset per game when it ends (`restart`), and draw actions with
`net.act`. A frame is `queue` (the forwards are launched; the host is free to run the scripted
agents meanwhile), then `actions` (the host waits for them).

`EagerActing`, what a plain PyTorch user writes: one T=1 forward of main over all games, one per
snapshot over only its games (their rows of one shared opponent state gathered, then scattered
back), and one device-to-host copy per network.

`CapturedActing`, what a careful one writes for a GPU (PyTorch's CUDA graphs notes,
docs/source/notes/cuda.rst): the observations of both seats go up in one copy from pinned host
memory into a static device buffer; each forward replays a CUDA graph captured once per
(state buffer, network): main over all games, and each snapshot slot in play over *all* games
with a state buffer of its own (a fixed batch size, so no gather; a slot's rows for games it
does not play are computed and ignored: every buffer is reset when a game ends, so the rows of
the slot a game does play hold exactly that game's history). The actions of every network come
back in one copy to pinned memory, the frame's one host wait. A graph reads the weights where
they live: the update's Adam and the snapshot freezes write them in place. On the CPU (tests
only) the same forwards run directly, without graphs: the layout is tested there
(tests/unit/test_plain_torch_recipe.py), the capture only on a GPU.
"""

import numpy as np
import torch
from torch import nn

from benchmarks.plain_recipe.config import MAIN_SEAT, OPPONENT_SEAT, RecipeConfig
from benchmarks.plain_recipe.net import act, rows_of
from benchmarks.plain_recipe.opponents import OpponentGroup
from benchmarks.plain_recipe.rollout import Rollout
from rl_platform.envs.duel import OBS_SIZE
from rl_platform.nets.transformer_lstm_net import State

WARMUP = 2
"""Eager forwards on a side stream before a capture (lazy initialisations happen there)."""


class EagerActing:
    """Each network's forward launched from Python, over exactly the games it plays."""

    def __init__(self, config: RecipeConfig, initial: State) -> None:
        self.config, self.initial, self.device = config, initial, torch.device(config.device)
        self.main_state = rows_of(initial, config.num_games)
        self.opponent_state = rows_of(initial, config.num_games)
        self._pending: list[torch.Tensor] = []

    def queue(
        self,
        main: nn.Module,
        obs: np.ndarray,
        groups: list[OpponentGroup],
        rollout: Rollout,
        t: int,
    ) -> None:
        """Launch frame `t`'s forwards on the observations `obs` [N, seats, 64]; main's
        observation, action and log-prob go into `rollout`."""
        frame = rollout.obs[t]
        frame.copy_(torch.from_numpy(obs[:, MAIN_SEAT]))
        action, logp = act(main, frame, self.main_state, self.config)
        rollout.actions[t], rollout.logp[t] = action, logp
        self._pending = [action]
        for _, net, games in groups:
            index = torch.from_numpy(games).to(self.device)
            state = {k: v[index] for k, v in self.opponent_state.items()}
            seat_obs = torch.from_numpy(obs[games, OPPONENT_SEAT]).to(self.device)
            actions, _ = act(net, seat_obs, state, self.config)
            for key, value in self.opponent_state.items():
                value.index_copy_(0, index, state[key])
            self._pending.append(actions)

    def actions(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """Main's actions [N] and each group's for its games, on the host."""
        main, *groups = (actions.cpu().numpy() for actions in self._pending)
        return main, groups

    def restart(self, games: np.ndarray) -> None:
        """The states of `games` (which just ended) back to the initial state."""
        index = torch.from_numpy(games).to(self.device)
        for state in (self.main_state, self.opponent_state):
            for key, value in state.items():
                value[index] = self.initial[key]


class CapturedActing:
    """Each forward replayed as a CUDA graph over all games (module docstring). On the CPU
    (tests only: the command refuses `--captured` there) the same forwards run directly."""

    def __init__(self, config: RecipeConfig, initial: State, *, slots: int) -> None:
        self.config, self.initial, self.device = config, initial, torch.device(config.device)
        self.graphs_on = self.device.type == "cuda"
        games, networks = config.num_games, 1 + slots  # row 0: main; row 1 + s: slot s
        self.host_obs = self._host(torch.zeros(games, 2, OBS_SIZE))
        self.obs = torch.zeros(games, 2, OBS_SIZE, device=self.device)
        self.host_actions = self._host(torch.zeros(networks, games, dtype=torch.int64))
        self.out_actions = torch.zeros(networks, games, dtype=torch.int64, device=self.device)
        self.out_logp = torch.zeros(games, device=self.device)
        self.states = [rows_of(initial, games) for _ in range(networks)]
        self.main_state = self.states[0]
        self.graphs: dict[tuple[int, int], torch.cuda.CUDAGraph] = {}
        self._rows: list[tuple[int, np.ndarray]] = []

    def _host(self, tensor: torch.Tensor) -> torch.Tensor:
        """Pinned on CUDA: copies to and from it can run asynchronously."""
        return tensor.pin_memory() if self.graphs_on else tensor

    def queue(
        self,
        main: nn.Module,
        obs: np.ndarray,
        groups: list[OpponentGroup],
        rollout: Rollout,
        t: int,
    ) -> None:
        """As `EagerActing.queue`, by graph replays."""
        self.host_obs.numpy()[...] = obs
        self.obs.copy_(self.host_obs, non_blocking=True)
        self._replay(0, main)
        for slot, net, _ in groups:
            self._replay(1 + slot, net)
        rollout.obs[t].copy_(self.obs[:, MAIN_SEAT])
        rollout.actions[t].copy_(self.out_actions[0])
        rollout.logp[t].copy_(self.out_logp)
        self.host_actions.copy_(self.out_actions, non_blocking=True)
        self._rows = [(1 + slot, games) for slot, _, games in groups]

    def actions(self) -> tuple[np.ndarray, list[np.ndarray]]:
        if self.graphs_on:
            torch.cuda.current_stream(self.device).synchronize()  # the frame's one host wait
        host = self.host_actions.numpy()
        return host[0].copy(), [host[row, games] for row, games in self._rows]

    def restart(self, games: np.ndarray) -> None:
        index = torch.from_numpy(games).to(self.device)
        for state in self.states:
            for key, value in state.items():
                value[index] = self.initial[key]

    def _forward(self, row: int, net: nn.Module) -> None:
        seat = MAIN_SEAT if row == 0 else OPPONENT_SEAT
        action, logp = act(net, self.obs[:, seat], self.states[row], self.config)
        self.out_actions[row].copy_(action)
        if row == 0:
            self.out_logp.copy_(logp)

    def _replay(self, row: int, net: nn.Module) -> None:
        if not self.graphs_on:
            self._forward(row, net)
            return
        key = (row, id(net))  # slot 0 mirrors main until the first freeze, then its snapshot
        if key not in self.graphs:
            self.graphs[key] = self._capture(row, net)
        self.graphs[key].replay()

    def _capture(self, row: int, net: nn.Module) -> torch.cuda.CUDAGraph:
        state = self.states[row]
        saved = {key: value.clone() for key, value in state.items()}
        current = torch.cuda.current_stream(self.device)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(current)
        with torch.no_grad(), torch.cuda.stream(side):
            for _ in range(WARMUP):
                self._forward(row, net)
        current.wait_stream(side)
        for key, value in state.items():  # the warm-up frames were not played
            value.copy_(saved[key])
        graph = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(graph):
            self._forward(row, net)
        return graph
