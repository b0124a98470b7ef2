"""A model type added without touching rl_platform: one file (tests/fixtures/example_model_type.py)
named by import path in `model.type`, then validated, built, trained by `rl_platform.train` (the
`rlp train` path), and rebuilt from its checkpoint as a policy."""

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from rl_platform import load_spec, train
from rl_platform.base.errors import SpecError
from rl_platform.policies import EnvContext, load_policy
from rl_platform.policies.rebuild import build_module, history_converter
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.rllib.rl_module_spec import resolved_module_spec
from rl_platform.spec import validate_spec_data
from rl_platform.storage.checkpoints import load_checkpoint, resolve_checkpoint
from tests.fixtures.example_model_type import TYPE, OneLayerModelSpec, OneLayerModule

SPEC = f"""
name: one_layer
env: {{id: CartPole-v1}}
model: {{type: "{TYPE}", width: 8, activation: relu}}
training: {{train_batch_size: 256, minibatch_size: 128, num_epochs: 1}}
resources: {{env_runners: 0}}
stop: {{iterations: 1}}
logging: {{wandb: "off"}}
"""
OBS = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
ACTIONS = gym.spaces.Discrete(2)


def _spec(tmp_path: Path, text: str = SPEC):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return load_spec(path)


def test_the_spec_validates_a_model_type_named_by_import_path(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    assert isinstance(spec.model, OneLayerModelSpec)
    assert (spec.model.width, spec.model.activation, spec.model.type) == (8, "relu", TYPE)
    assert not spec.model.stateful and spec.model.opponent_history() is None
    assert validate_spec_data(spec.dump()) == spec  # the saved spec.yaml names it again
    with pytest.raises(SpecError, match=r"model\.widht: unknown key; did you mean 'width'"):
        _spec(tmp_path, SPEC.replace("width: 8", "widht: 8"))
    with pytest.raises(SpecError, match=r"model\.type: .* must name a subclass"):
        _spec(tmp_path, SPEC.replace("OneLayerModelSpec", "OneLayerModule"))


def test_the_config_builder_builds_its_rl_module(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    config = build_algorithm_config(spec)
    assert config.rl_module_spec.module_class is OneLayerModule
    module = resolved_module_spec(spec, observation_space=OBS, action_space=ACTIONS).build()
    assert isinstance(module, OneLayerModule) and module.trunk[0].out_features == 8
    assert history_converter(spec, OBS) is None


def test_it_trains_and_plays_from_its_checkpoint(ray_local, tmp_path: Path) -> None:
    run_dir = train(_spec(tmp_path), out_dir=tmp_path / "runs").run_dir
    assert TYPE in (run_dir / "spec.yaml").read_text()
    loaded = load_checkpoint(resolve_checkpoint(run_dir))
    weights = module_weights(loaded.parts[ALGORITHM_PART])["default_policy"]
    rebuilt = build_module(
        load_spec(run_dir / "spec.yaml"),
        observation_space=OBS,
        action_space=ACTIONS,
        weights=weights,
    )
    for name, value in rebuilt.module.get_state().items():
        np.testing.assert_array_equal(np.asarray(value), weights[name])

    policy = load_policy(f"checkpoint://{run_dir}", env=EnvContext("CartPole-v1", OBS, ACTIONS))
    obs = np.zeros((3, 4), np.float32)
    actions = policy.act(obs, np.random.default_rng(0), keys=["a", "b", "c"])
    assert actions.shape == (3,) and set(actions.tolist()) <= {0, 1}
