"""`rlp league tournament` on the duel: learned members play in the vectorized arena through the
`policies/` path (rebuilt RLModule), one recurrent state and history window per game row."""

from pathlib import Path

import numpy as np
import pytest

from rl_platform import load_spec
from rl_platform.envs.duel import NUM_ACTIONS, DuelCore
from rl_platform.envs.duel.arena import run_matches
from rl_platform.envs.duel.scripted import act_constant
from rl_platform.evaluation.arena_games import ArenaSeat
from rl_platform.evaluation.envs import EnvTarget, probe_env
from rl_platform.policies import EnvContext, learned_policy
from rl_platform.policies.module_policy import ModulePolicy
from rl_platform.teachers import DUEL_ENV

LSTM = "{type: lstm, encoder: [32], lstm_cell_size: 16, actor: [8], critic: [8]}"
TRANSFORMER = (
    "{type: transformer_lstm, obs_split: {self: [0, 32], opponent: [32, 64]}, history: 4,"
    " layers: 1, heads: 2, d_model: 16, obs_encoder: [16], lstm_cell_size: 16, actor: [8],"
    " critic: [8]}"
)


def _greedy_member(spec_file: Path) -> ModulePolicy:
    """A freshly initialized member built the way `league://RUN/ID` builds one."""
    shape = probe_env(EnvTarget(DUEL_ENV))
    context = EnvContext(DUEL_ENV, *shape.spaces[shape.agent_ids[0]])
    return learned_policy(load_spec(spec_file), None, env=context, sample=False, label="member")


@pytest.mark.parametrize("model", [LSTM, TRANSFORMER], ids=["lstm", "transformer_lstm"])
def test_games_played_in_lockstep_act_as_if_played_alone(model: str, write_spec) -> None:
    policy = _greedy_member(write_spec(f"name: arena\nenv: {{id: {DUEL_ENV}}}\nmodel: {model}\n"))
    rng = np.random.default_rng(0)
    core = DuelCore(3, seed=0)
    frames = [core.reset()[:, 0]]
    for _ in range(6):
        frames.append(core.step(rng.integers(0, NUM_ACTIONS, size=(3, 2))).obs[:, 0])

    lockstep = ArenaSeat(policy, seating=0)
    batched = np.stack([lockstep(obs, rng) for obs in frames])  # [T, 3]
    batched_states = [policy.state((0, row)) for row in range(3)]  # one state per game row
    lockstep.leave()
    assert policy.state((0, 2)) is None  # forgotten once the seating is over
    for row in range(3):
        alone = ArenaSeat(policy, seating=1 + row)
        single = np.stack([alone(obs[row : row + 1], rng)[0] for obs in frames])
        state = policy.state((1 + row, 0))
        alone.leave()
        assert (single == batched[:, row]).all()
        for name, value in state.items():  # the state carries the history window's effect
            np.testing.assert_allclose(value, batched_states[row][name], rtol=1e-5, atol=1e-6)

    result = run_matches(
        ArenaSeat(policy, seating=9), act_constant, num_games=4, seed=0, max_steps=40
    )
    assert result.games == 4
