"""The recipe's network (`StreamingTransformerLSTMNet`, the class our RLModule wraps), its
inputs as the OpponentHistory connector writes them for `encoder: streaming`, and one acting
forward."""

import gymnasium as gym
import torch
from torch import nn

from benchmarks.plain_recipe.config import RecipeConfig
from rl_platform.base.observation_keys import HISTORY_KEY, MASK_KEY, SELF_KEY
from rl_platform.envs.duel import NUM_ACTIONS
from rl_platform.nets.transformer_lstm_net import State, transformer_lstm_net_for


def build_net(config: RecipeConfig) -> nn.Module:
    own, opponent = config.parts
    return transformer_lstm_net_for(
        obs_dim=own.stop - own.start,
        frame_dim=opponent.stop - opponent.start,
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        config=config.model,
    ).to(config.device)


def net_inputs(obs: torch.Tensor, config: RecipeConfig) -> dict[str, torch.Tensor]:
    """Raw observations [B, T, 64] -> the streaming net's inputs (one frame per step)."""
    own, opponent = config.parts
    return {
        SELF_KEY: obs[..., own],
        HISTORY_KEY: obs[..., opponent].unsqueeze(-2),
        MASK_KEY: obs.new_ones(*obs.shape[:-1], 1),
    }


def rows_of(state: State, rows: int) -> State:
    """The unbatched `state` repeated for `rows` rows, in fresh storage."""
    return {k: v.expand(rows, *v.shape).clone() for k, v in state.items()}


def act(
    net: nn.Module, obs: torch.Tensor, state: State, config: RecipeConfig
) -> tuple[torch.Tensor, torch.Tensor]:
    """One frame for B rows: sampled actions [B] and their log-probs [B]. `state` is a
    preallocated buffer and is overwritten with the state after the frame.

    The action is drawn as argmax(log p - log E), E ~ Exp(1) (the exponential race, a
    Gumbel-max): `torch.multinomial` checks its input with a host read, which a CUDA graph
    cannot hold, and one sampler for both modes keeps them the same policy."""
    embeddings, state_out = net.encode(net_inputs(obs[:, None], config), state)
    for key, value in state.items():
        value.copy_(state_out[key])
    logp_all = torch.log_softmax(net.policy(embeddings[:, 0], None).float(), dim=-1)
    action = (logp_all - torch.empty_like(logp_all).exponential_().log()).argmax(-1)
    return action, logp_all.gather(1, action[:, None]).squeeze(1)


def values_of(net: nn.Module, obs: torch.Tensor, config: RecipeConfig) -> torch.Tensor:
    """V(s) [...] of raw observations [..., 64] (`critic_input: observation`)."""
    return net.critic(net.critic_observation(net_inputs(obs, config)))
