"""Spec loading: includes, interpolation, overrides, profiles, dumping (no Ray)."""

import pytest
import yaml

from rl_platform.base.errors import SpecError
from rl_platform.spec import load_spec, parse_override, validate_spec_data
from rl_platform.spec.training import DQNTraining, PPOTraining
from rl_platform.utils.safe_yaml import dump_yaml, parse_yaml

MINIMAL = """
name: demo
env: {id: CartPole-v1}
stop: {iterations: 3}
"""


def test_minimal_spec_gets_documented_defaults(write_spec):
    spec = load_spec(write_spec(MINIMAL))
    assert spec.algo == "PPO"
    assert isinstance(spec.training, PPOTraining)
    assert spec.resources.env_runners == 0
    assert spec.logging.wandb == "offline"
    assert spec.stop.iterations == 3


def test_base_include_merges_under_the_including_file(write_spec):
    write_spec(
        "name: base\nenv: {id: CartPole-v1}\ntraining: {lr: 0.01, num_epochs: 3}\n", "base.yaml"
    )
    child = write_spec(
        "_base: [base.yaml]\nname: child\ntraining: {lr: 0.002}\nstop: {iterations: 1}\n"
    )
    spec = load_spec(child)
    assert spec.name == "child"
    assert spec.training.lr == pytest.approx(0.002)
    assert spec.training.num_epochs == 3


def test_include_cycle_is_reported(write_spec):
    write_spec("_base: [b.yaml]\nname: a\n", "a.yaml")
    write_spec("_base: [a.yaml]\nname: b\n", "b.yaml")
    with pytest.raises(SpecError, match="include cycle"):
        load_spec(write_spec("_base: [a.yaml]\n", "c.yaml"))


def test_interpolation_of_vars_and_other_fields(write_spec):
    spec = load_spec(
        write_spec(
            "vars: {width: 32}\nname: interp\nenv: {id: CartPole-v1}\n"
            "model: {hidden: ['${vars.width}', '${vars.width}']}\n"
            "training: {train_batch_size: 1000, minibatch_size: '${training.train_batch_size}'}\n"
            "stop: {iterations: 1}\n"
        )
    )
    assert spec.model.hidden == [32, 32]
    assert spec.training.minibatch_size == 1000


def test_unresolved_interpolation_names_the_key(write_spec):
    path = write_spec(MINIMAL + "model: {hidden: ['${vars.missing}']}\n")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert "model.hidden" in str(info.value)


def test_overrides_are_parsed_as_yaml_and_revalidated(write_spec):
    path = write_spec(MINIMAL)
    spec = load_spec(path, overrides=["training.lr=1e-3", "model.hidden=[8, 8]", "seed=7"])
    assert spec.training.lr == pytest.approx(1e-3)
    assert spec.model.hidden == [8, 8]
    assert spec.seed == 7
    with pytest.raises(SpecError, match=r"training\.lr"):
        load_spec(path, overrides=["training.lr=2"])


def test_tilde_override_removes_a_key_that_a_mapping_override_would_keep(write_spec):
    """A profile's custom resources can be dropped from the command line (found on a one-node
    GPU machine, where `--profile cluster` waits for a node with `rlp_learner`). A mapping
    value merges into the mapping there, as in Hydra; `~KEY` removes the key."""
    path = write_spec(
        MINIMAL + "resources: {custom_resources_per_learner: {rlp_learner: 1, fast_disk: 1}}\n"
    )
    merged = load_spec(path, overrides=["resources.custom_resources_per_learner={big: 2}"])
    assert merged.resources.custom_resources_per_learner == {
        "rlp_learner": 1, "fast_disk": 1, "big": 2,
    }  # fmt: skip
    cleared = load_spec(path, overrides=["~resources.custom_resources_per_learner"])
    assert cleared.resources.custom_resources_per_learner == {}
    one_gone = load_spec(path, overrides=["~resources.custom_resources_per_learner.rlp_learner"])
    assert one_gone.resources.custom_resources_per_learner == {"fast_disk": 1}
    with pytest.raises(SpecError, match=r"~resources.custom_resources_per_lerner: no such key"):
        load_spec(path, overrides=["~resources.custom_resources_per_lerner"])
    with pytest.raises(SpecError, match="or ~KEY to remove a key"):
        load_spec(path, overrides=["~resources..custom_resources_per_learner"])


@pytest.mark.parametrize("bad", ["training.lr", "=3", "a..b=1"])
def test_malformed_override_is_a_clear_error(bad):
    with pytest.raises(SpecError, match="KEY=VALUE"):
        parse_override(bad)


def test_profile_overrides_only_budget_fields(write_spec):
    path = write_spec(
        MINIMAL + "training: {lr: 0.01}\nprofiles:\n  smoke:\n    stop: {iterations: 1}\n"
        "    resources: {env_runners: 0}\n    checkpoint: {every_iterations: 1}\n"
    )
    full, smoke = load_spec(path), load_spec(path, profile="smoke")
    assert (full.stop.iterations, smoke.stop.iterations) == (3, 1)
    assert smoke.checkpoint.every_iterations == 1
    assert smoke.training == full.training and smoke.model == full.model


def test_profile_touching_hyperparameters_is_refused(write_spec):
    path = write_spec(MINIMAL + "profiles:\n  fast:\n    training: {lr: 1.0}\n")
    with pytest.raises(SpecError, match="profiles"):
        load_spec(path, profile="fast")


def test_unknown_profile_lists_available(write_spec):
    path = write_spec(MINIMAL + "profiles:\n  smoke:\n    stop: {iterations: 1}\n")
    with pytest.raises(SpecError, match=r"available: smoke"):
        load_spec(path, profile="nightly")


def test_training_model_follows_algo(write_spec):
    spec = load_spec(write_spec(MINIMAL + "algo: DQN\ntraining: {n_step: 3}\n"))
    assert isinstance(spec.training, DQNTraining) and spec.training.n_step == 3
    with pytest.raises(SpecError, match=r"training\.n_step: unknown key"):
        load_spec(write_spec(MINIMAL + "algo: PPO\ntraining: {n_step: 3}\n"))


def test_dump_round_trips_through_yaml(write_spec):
    spec = load_spec(write_spec(MINIMAL + "training: {lambda: 0.9}\n"))
    text = dump_yaml(spec.dump())
    assert "lambda: 0.9" in text and "algo: PPO" in text
    again = validate_spec_data(parse_yaml(text))
    assert again == spec


def test_yaml_12_scalars():
    data = parse_yaml("a: off\nb: true\nc: 3e-4\nd: 2024-01-01\ne: yes\n")
    assert data == {"a": "off", "b": True, "c": 3e-4, "d": "2024-01-01", "e": "yes"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hidden: [64,\t64]\n", {"hidden": [64, 64]}),
        ("hidden: [\t64 ,\t64\t]\n", {"hidden": [64, 64]}),
        ("training: {lr: 1e-3,\tgamma: 0.99}\n", {"training": {"lr": 1e-3, "gamma": 0.99}}),
        ("hidden: [64,\n\t64]\n", {"hidden": [64, 64]}),
        ("lr:\t3e-4\n", {"lr": 3e-4}),
        ("lr: 3e-4\t# a comment\n", {"lr": 3e-4}),
    ],
)
def test_a_tab_that_separates_is_valid_yaml(text, expected):
    """YAML 1.2 allows a tab wherever it separates (s-separate-in-line); only indentation
    must be spaces. PyYAML's scanner skipped spaces only, so `[64,\\t64]` was refused."""
    assert parse_yaml(text) == expected


def test_a_tab_in_block_indentation_is_still_refused():
    with pytest.raises(yaml.YAMLError):
        parse_yaml("name: demo\n\tenv: x\n")
