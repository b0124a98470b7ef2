"""A small streaming transformer_lstm module and an eager reference for the acting tests.

The reference is the eager per-module path the array runner took before acting moved into
`device_acting` (`module_actions.act` on numpy rows, states kept as numpy arrays): the tests
check that `ModuleActing` computes the same actions, log-probabilities and states.
"""

import gymnasium as gym
import numpy as np
import torch

from rl_platform.connectors.opponent_history import OpponentHistory
from rl_platform.modules.transformer_lstm_module import TransformerLSTMModule
from rl_platform.sampling import module_actions

GAMES, SEATS, RAW_DIM = 5, 2, 8
STREAMING = {
    "history": 4, "layers": 2, "heads": 4, "kv_heads": 2, "d_model": 16, "lstm_cell_size": 12,
    "actor": [8], "critic": [8], "obs_encoder": [8], "max_seq_len": 4, "encoder": "streaming",
    "obs_split": {"self": [0, 4], "opponent": [4, 8]},
}  # fmt: skip


def streaming_module(seed: int = 0, **overrides) -> TransformerLSTMModule:
    torch.manual_seed(seed)
    raw = gym.spaces.Box(-1.0, 1.0, (RAW_DIM,), np.float32)
    connector = OpponentHistory(raw, None, history=1, obs_split=STREAMING["obs_split"])
    module = TransformerLSTMModule(
        observation_space=connector.observation_space,
        action_space=gym.spaces.Discrete(5),
        model_config={**STREAMING, **overrides},
    )
    return module.eval()


def model_obs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One step's model inputs of every seat `[N, P, ...]`, as `HistoryInputs` writes them."""
    return {
        "obs": rng.normal(size=(GAMES, SEATS, 4)).astype(np.float32),
        "opponent_history": rng.normal(size=(GAMES, SEATS, 1, 4)).astype(np.float32),
        "history_mask": np.ones((GAMES, SEATS, 1), np.float32),
    }


class EagerReference:
    """Numpy states per seat and `module_actions.act` per step, as the runner did."""

    def __init__(self, module: TransformerLSTMModule) -> None:
        self.module = module
        self.initial = module.get_initial_state()
        self.states = {
            k: np.broadcast_to(v, (GAMES, SEATS, *v.shape)).copy() for k, v in self.initial.items()
        }

    def act(self, obs: dict, games: np.ndarray, seats: np.ndarray, *, explore: bool):
        rows = {k: v[games, seats] for k, v in obs.items()}
        state_in = {k: v[games, seats] for k, v in self.states.items()}
        output = module_actions.act(self.module, rows, explore=explore, state_in=state_in)
        for key, value in output.state_out.items():
            self.states[key][games, seats] = value
        return output

    def restart(self, games: np.ndarray) -> None:
        for key, value in self.states.items():
            value[games] = self.initial[key]
