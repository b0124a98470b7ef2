"""The reference self-play recipe (experiments/duel_selfplay_transformer.yaml): its profiles
differ in budget only, at the reference trainer's sizes (issue #20 item 4)."""

import gymnasium as gym
import pytest

from rl_platform import load_spec
from rl_platform.nets.blocks import count_parameters
from rl_platform.nets.transformer_lstm_net import transformer_lstm_net_for
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec
from tests.conftest import EXPERIMENTS

RECIPE = EXPERIMENTS / "duel_selfplay_transformer.yaml"
PROFILES = ("test", "full", "gpu", "cluster", "smoke")
GAMES, STEPS = 128, 32  # the batch's layout: 128 games x 32 steps = 4,096 env steps


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_shares_every_hyperparameter_and_the_layout(profile) -> None:
    base, chosen = load_spec(RECIPE).dump(), load_spec(RECIPE, profile=profile).dump()
    budget = {"stop", "checkpoint", "resources", "profiles"}
    for spec in (base, chosen):
        spec["env"].pop("envs_per_runner")  # the layout, checked below
    assert {k: v for k, v in chosen.items() if k not in budget} == {
        k: v for k, v in base.items() if k not in budget
    }
    spec = load_spec(RECIPE, profile=profile)
    games = spec.env.envs_per_runner * max(1, spec.resources.env_runners)
    assert (games, spec.training.train_batch_size // games) == (GAMES, STEPS)


def test_the_gpu_profile_acts_and_learns_on_one_gpu() -> None:
    resources = load_spec(RECIPE, profile="gpu").resources
    assert (resources.acting_device, resources.env_runners, resources.learners) == ("cuda", 0, 0)
    assert resources.device == "cuda" and resources.gpus_per_learner == 1


def test_the_test_and_full_budgets_are_the_reference_trainers() -> None:
    test, full = load_spec(RECIPE, profile="test"), load_spec(RECIPE, profile="full")
    assert (test.stop.env_steps, test.checkpoint.every_env_steps) == (250_000, 25_000)
    assert (full.stop.env_steps, full.checkpoint.every_env_steps) == (10_000_000, 100_000)
    assert full.checkpoint.keep_last == 100
    final_mix = full.league.mix_at(full.stop.env_steps)
    assert final_mix == pytest.approx({"self_play": 0.8, "based": 0.15, "constant": 0.05})
    cluster = load_spec(RECIPE, profile="cluster")
    assert cluster.resources.learners == 1 and cluster.resources.gpus_per_learner == 1


def test_the_model_is_the_reference_size() -> None:
    spec = load_spec(RECIPE)
    config, _ = TransformerLSTMModelSpec.from_model_config(dict(spec.model.settings))
    assert (config.layers, config.heads, config.d_model, config.history) == (6, 8, 256, 90)
    assert (config.lstm_cell_size, config.encoder) == (512, "streaming")
    net = transformer_lstm_net_for(
        obs_dim=32, frame_dim=32, action_space=gym.spaces.Discrete(10), config=config
    )
    assert 3.6e6 <= count_parameters(net) <= 4.4e6  # "~4M parameters"
