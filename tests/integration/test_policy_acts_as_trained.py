"""An evaluated transformer_lstm policy acts as the learner sees it, over games longer than H.

Evaluation (`rlp eval`, the arena, the encoder benchmark) steps a `ModulePolicy` one frame at
a time through the `OpponentHistory` converter; training feeds the learner whole sequences
built by the array runner's `HistoryInputs`. The two must give the same action logits at
every step of a game, also after the streaming encoder's key/value cache has wrapped around.
(2026-11-26: a (c) policy whose training-time win rate against `zoner` read 0.65 evaluated at
0.20; this check showed evaluation exact, and replaying the final weights through the
training path gave 0.23: the policy had moved, not the evaluation.)
"""

import numpy as np
import torch
from ray.rllib.core.columns import Columns

from rl_platform.envs.duel.arena import play_games
from rl_platform.evaluation.envs import EnvTarget, probe_env
from rl_platform.policies import EnvContext, learned_policy, load_policy
from rl_platform.policies.module_policy import ModulePolicy
from rl_platform.policies.rebuild import build_module, history_converter
from rl_platform.sampling.model_inputs import HistoryInputs
from rl_platform.spec import validate_spec_data

HISTORY = 4
SPLIT = {"self": [0, 64], "opponent": [32, 64]}
SPEC = {
    "name": "acts_as_trained",
    "algo": "PPO",
    "env": {"id": "rlp/Duel-v0"},
    "model": {
        "type": "transformer_lstm", "encoder": "streaming", "obs_split": SPLIT,
        "history": HISTORY, "layers": 1, "heads": 2, "d_model": 16, "obs_encoder": [16],
        "lstm_cell_size": 8, "actor": [8], "critic": [8], "lstm_skip": True,
    },
    "logging": {"wandb": "off"},
}  # fmt: skip


def _policy_recording_logits() -> tuple[ModulePolicy, list[torch.Tensor], EnvContext]:
    spec = validate_spec_data(SPEC)
    observation_space, action_space = probe_env(EnvTarget(spec.env.id)).spaces["player_0"]
    converter = history_converter(spec, observation_space)
    torch.manual_seed(0)
    rebuilt = build_module(
        spec,
        observation_space=converter.observation_space,
        action_space=action_space,
        weights=None,
    )
    policy = ModulePolicy("policy", rebuilt, sample=False, converter=converter)
    logits: list[torch.Tensor] = []
    forward = policy.module._forward_inference

    def recording(batch: dict, **kwargs) -> dict:
        out = forward(batch, **kwargs)
        logits.append(out[Columns.ACTION_DIST_INPUTS][:, 0].clone())  # [games, actions]
        return out

    policy.module._forward_inference = recording
    return policy, logits, EnvContext(spec.env.id, observation_space, action_space)


def _learner_inputs(raw: np.ndarray) -> dict[str, torch.Tensor]:
    """The array runner's model inputs for one seat's frames [T, D], as a [1, T, ...] batch."""
    inputs = HistoryInputs(history=1, obs_split=SPLIT)  # streaming: the newest frame only
    acting, ended = np.ones((1, 1), bool), np.zeros(1, bool)
    steps = [inputs.start(raw[:1, None], acting)]
    steps += [inputs.advance(frame[None, None], acting, ended, None)[0] for frame in raw[1:]]
    return {
        key: torch.from_numpy(np.stack([np.asarray(step[key])[0, 0] for step in steps]))[None]
        for key in steps[0]
    }


def test_arena_policy_logits_equal_the_learner_forward_over_a_whole_game() -> None:
    policy, logits, context = _policy_recording_logits()
    opponent = load_policy("scripted://duel/based", env=context)
    frames: list[np.ndarray] = []

    def agent(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        frames.append(obs.copy())
        return policy.act(obs, rng, keys=range(len(obs)))

    log = play_games(
        agent,
        lambda obs, rng: opponent.act(obs, rng, keys=range(len(obs))),
        num_games=2,
        seed=3,
        max_steps=40,
    )
    steps = int(log.length[0])
    assert steps > 3 * HISTORY  # the key/value cache has wrapped around several times
    module = policy.module
    initial = {
        k: torch.from_numpy(np.asarray(v))[None] for k, v in module.get_initial_state().items()
    }
    raw = np.stack(frames[:steps])[:, 0]  # game 0, player 0
    with torch.no_grad():
        learned = module._forward_train(
            {Columns.OBS: _learner_inputs(raw), Columns.STATE_IN: initial}
        )[Columns.ACTION_DIST_INPUTS][0]
    acted = torch.stack([step[0] for step in logits[:steps]])
    torch.testing.assert_close(acted, learned, atol=1e-5, rtol=1e-5)


class _HistoryCutPolicy(ModulePolicy):
    """Forgets the encoder's key/value cache after every step (as the encoder benchmark's
    memory-cut rows do), through the public hook and method only."""

    def act(self, obs, rng, *, keys):
        actions = super().act(obs, rng, keys=keys)
        self.reset_state(keys, entries=("kv",))
        return actions


def test_a_policy_class_resets_the_named_state_entries_and_keeps_the_others() -> None:
    spec = validate_spec_data(SPEC)
    observation_space, action_space = probe_env(EnvTarget(spec.env.id)).spaces["player_0"]
    context = EnvContext(spec.env.id, observation_space, action_space)
    torch.manual_seed(0)
    policy = learned_policy(
        spec, None, env=context, sample=False, label="cut", policy_class=_HistoryCutPolicy
    )
    assert isinstance(policy, _HistoryCutPolicy)
    initial = policy.module.get_initial_state()
    rng, obs = np.random.default_rng(0), observation_space.sample()[None]
    for _ in range(3):
        policy.act(obs, rng, keys=[0])
    state = policy.state(0)
    assert any(name.startswith("kv") for name in state) and any(
        not name.startswith("kv") for name in state
    )
    for name, value in state.items():
        same = np.allclose(np.asarray(value), np.asarray(initial[name]))
        assert same == name.startswith("kv"), name
