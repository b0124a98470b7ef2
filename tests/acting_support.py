"""A small streaming transformer_lstm module and an eager reference for the acting tests.

The reference is the eager per-module path the array runner took before acting moved into
`device_acting` (`eager_act` below, as `module_actions.act` computed it, on numpy rows with
states kept as numpy arrays): the tests check that `ModuleActing` computes the same actions,
log-probabilities and states.
"""

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns

from rl_platform.connectors.opponent_history import OpponentHistory
from rl_platform.env_runner.module_actions import PolicyOutput
from rl_platform.modules.transformer_lstm_module import TransformerLSTMModule

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


def eager_act(module, obs: dict, *, explore: bool, state_in: dict) -> tuple[PolicyOutput, dict]:
    """One step of a recurrent module over numpy rows, with a time axis of 1: categorical
    actions drawn by inverting the CDF with the CPU generator, as the runner did."""
    batch = {
        Columns.OBS: {k: torch.as_tensor(v)[:, None] for k, v in obs.items()},
        Columns.STATE_IN: {k: torch.as_tensor(v) for k, v in state_in.items()},
    }
    with torch.no_grad():
        out = module._forward_exploration(batch) if explore else module._forward_inference(batch)
        logits = out[Columns.ACTION_DIST_INPUTS][:, 0]
        log_probs = torch.log_softmax(logits, dim=-1)
        if explore:
            cdf = log_probs.exp().cumsum(dim=-1)
            u = torch.rand(cdf.shape[0], 1) * cdf[:, -1:]
            actions = torch.searchsorted(cdf, u, right=True)[:, 0].clamp_(max=cdf.shape[-1] - 1)
        else:
            actions = logits.argmax(dim=-1)
    state_out = {k: v.numpy() for k, v in out[Columns.STATE_OUT].items()}
    output = PolicyOutput(actions=actions.numpy(), logits=logits, log_probs=log_probs)
    return output, state_out


class EagerReference:
    """Numpy states per seat and `eager_act` per step, as the runner did."""

    def __init__(self, module: TransformerLSTMModule) -> None:
        self.module = module
        self.initial = module.get_initial_state()
        self.states = {
            k: np.broadcast_to(v, (GAMES, SEATS, *v.shape)).copy() for k, v in self.initial.items()
        }

    def act(self, obs: dict, games: np.ndarray, seats: np.ndarray, *, explore: bool):
        rows = {k: v[games, seats] for k, v in obs.items()}
        state_in = {k: v[games, seats] for k, v in self.states.items()}
        output, state_out = eager_act(self.module, rows, explore=explore, state_in=state_in)
        for key, value in state_out.items():
            self.states[key][games, seats] = value
        return output

    def restart(self, games: np.ndarray) -> None:
        for key, value in self.states.items():
            value[games] = self.initial[key]
