"""`training.learner`: which learner path a spec gets (rl_platform/spec/learner_choice.py), and
`resources.overlap` only where the array runner samples."""

import pytest

from rl_platform.base.errors import SpecError
from rl_platform.spec import validate_spec_data

LSTM = {"type": "lstm", "lstm_cell_size": 8, "max_seq_len": 4}


def _spec(**extra):
    data = {
        "name": "learner_choice",
        "env": {"id": "rlp/Duel-v0", "envs_per_runner": 4},
        "model": {"type": "mlp", "hidden": [8]},
    }
    for key, value in extra.items():
        merge = isinstance(value, dict) and key != "model"  # a model replaces the default
        data[key] = {**data.get(key, {}), **value} if merge else value
    return validate_spec_data(data)


def test_auto_picks_the_array_learner_on_the_duel() -> None:
    assert _spec().learner_choice().kind == "array"
    recurrent = _spec(model={**LSTM, "critic_input": "observation"})
    assert recurrent.learner_choice().kind == "array"


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ({"env": {"runner": "rllib"}}, "RLlib's runner"),
        ({"env": {"id": "pettingzoo/connect_four_v3"}}, "turn-based"),
        ({"model": {**LSTM, "critic_input": "memory"}}, "critic_input: memory"),
        (
            {"bc": {"teacher": "scripted://duel/based", "replay": {"capacity": 100}}},
            "bc.replay",
        ),
        ({"resources": {"learners": 2}}, "resources.learners 2"),
        ({"algo": "APPO"}, "not PPO"),
    ],
)
def test_auto_falls_back_and_array_refuses_naming_the_key(extra, reason) -> None:
    choice = _spec(**extra).learner_choice()
    assert choice.kind == "rllib" and reason in choice.reason
    with pytest.raises(SpecError, match=r"training\.learner array cannot train this spec"):
        _spec(**(extra | {"training": {"learner": "array"}}))


TRANSFORMER = {
    "type": "transformer_lstm",
    "obs_split": {"self": [0, 32], "opponent": [32, 64]},
    "critic_input": "observation",
}


@pytest.mark.parametrize("key", ["opponent_prediction", "opponent_action"])
def test_a_loss_term_the_array_learner_cannot_serve_is_refused_in_one_line(key: str) -> None:
    """The array learner's step computes PPO and BC only: a model that adds a term to the loss
    (`ModelTypeSpec.loss_terms`) learns on RLlib's path, and asking for `array` says why."""
    model = {**TRANSFORMER, key: 0.25}
    assert _spec(model=TRANSFORMER).learner_choice().kind == "array"
    choice = _spec(model=model).learner_choice()
    assert choice.kind == "rllib"
    assert choice.reason == f"model.{key} adds a loss term the array learner does not compute"
    with pytest.raises(SpecError) as refused:
        _spec(model=model, training={"learner": "array"})
    message = str(refused.value)
    assert f"training.learner array cannot train this spec: {choice.reason}" in message
    assert len(message.strip().splitlines()) == 1, message


def test_bc_without_a_replay_learns_on_the_array_path() -> None:
    """BC's term is part of the array learner's step; only its label replay is not."""
    from rl_platform.learners.array_bc_ppo import ArrayBCPPOLearner
    from rl_platform.learners.bc_ppo import BCPPOLearner
    from rl_platform.rllib.algorithms import learner_class

    spec = _spec(bc={"teacher": "scripted://duel/based"})
    assert spec.learner_choice().kind == "array"
    assert learner_class(spec) is ArrayBCPPOLearner
    assert (
        learner_class(_spec(bc={"teacher": "scripted://duel/based"}, env={"runner": "rllib"}))
        is BCPPOLearner
    )


def test_rllib_is_always_honoured() -> None:
    assert _spec(training={"learner": "rllib"}).learner_choice().kind == "rllib"


def test_overlap_needs_the_array_runner() -> None:
    assert _spec(resources={"overlap": True}).resources.overlap
    with pytest.raises(SpecError, match=r"resources\.overlap acts in the array runner"):
        _spec(env={"runner": "rllib"}, resources={"overlap": True})
