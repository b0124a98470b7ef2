"""The shipped champion (experiments/pretrained/duel_recipe.safetensors) loads as `policy://`
from a fresh clone and acts in the duel (issue #56, item 7): the file alone rebuilds its model,
with the game settings it was trained under."""

import numpy as np

from rl_platform.envs.duel.pettingzoo_env import action_space, observation_space
from rl_platform.evaluation.envs import resolve_env
from rl_platform.policies import EnvContext, load_policy, parse_policy_uri
from rl_platform.policies.exported import read_exported
from rl_platform.teachers import DUEL_ENV
from tests.conftest import REPO_ROOT

SHIPPED = REPO_ROOT / "experiments" / "pretrained" / "duel_recipe.safetensors"


def test_the_shipped_champion_acts_in_the_duel_under_its_own_rules():
    found = read_exported(SHIPPED, label="shipped")
    assert found.spec.model.type == "transformer_lstm" and found.spec.env.id == DUEL_ENV
    uri = f"policy://{SHIPPED}"
    target = resolve_env("duel", policies=[parse_policy_uri(uri)])
    assert target.kwargs.get("zone_closes_at") == 0.5  # plays under the rules it learned
    policy = load_policy(uri, env=EnvContext(DUEL_ENV, observation_space(), action_space()))
    obs = np.stack([observation_space().sample() for _ in range(8)])
    actions = policy.act(obs, np.random.default_rng(0), keys=list(range(8)))
    assert actions.shape == (8,) and all(action_space().contains(int(a)) for a in actions)
