"""The model-type registry (rl_platform/spec/model.py): built-in types found by file, a user's
type by import path, capabilities read instead of `model.type` strings."""

import importlib
import re
from pathlib import Path
from typing import Annotated, ClassVar

import pytest
from pydantic import Field

from rl_platform.base.errors import SpecError
from rl_platform.spec import validate_spec_data
from rl_platform.spec.model import BUILT_IN_MODEL_TYPES, MODEL_TYPES, model_type_named
from rl_platform.spec.model_type import ModelTypeSpec, OpponentHistoryInputs
from rl_platform.spec.model_types.lstm import LSTMModelSpec
from rl_platform.spec.model_types.mlp import MLPModelSpec
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec

PACKAGE = Path(__file__).resolve().parents[2] / "rl_platform"
REGISTRY = ("spec/model.py", "spec/model_type.py", "spec/model_types/")
SPLIT = {"self": [0, 32], "opponent": [32, 64]}


class TinyModelSpec(ModelTypeSpec):
    """A user's type, as a file outside the package declares it."""

    rl_module: ClassVar[str] = "somewhere.else:TinyModule"
    stateful: ClassVar[bool] = True

    width: Annotated[int, Field(gt=0)] = 4
    """Hidden units."""


TINY = f"{__name__}:TinyModelSpec"


def _spec(model: dict | None = None):
    data = {"name": "demo", "env": {"id": "rlp/Duel-v0"}, "stop": {"iterations": 1}}
    return validate_spec_data(data if model is None else {**data, "model": model})


def test_the_built_in_types_are_the_files_of_model_types() -> None:
    files = sorted(
        p.stem for p in (PACKAGE / "spec" / "model_types").glob("*.py") if p.stem[0] != "_"
    )
    assert [t.__module__.rsplit(".", 1)[1] for t in BUILT_IN_MODEL_TYPES] == files
    assert {
        "default": MLPModelSpec,
        "mlp": MLPModelSpec,
        "lstm": LSTMModelSpec,
        "transformer_lstm": TransformerLSTMModelSpec,
    } == MODEL_TYPES


def test_capabilities_are_declared_by_the_type() -> None:
    assert not MLPModelSpec.stateful and LSTMModelSpec.stateful
    assert TransformerLSTMModelSpec.stateful
    assert MLPModelSpec().opponent_history() is None and LSTMModelSpec().opponent_history() is None
    window = TransformerLSTMModelSpec(history=6, obs_split=SPLIT)
    assert window.opponent_history() == OpponentHistoryInputs(frames=6, obs_split=SPLIT)
    streaming = window.model_copy(update={"encoder": "streaming"})
    assert streaming.opponent_history().frames == 1
    assert window.opponent_actions_key() is None
    assert TransformerLSTMModelSpec(opponent_action=0.5).opponent_actions_key() == "opponent_action"
    assert MLPModelSpec().loss_terms() == () and window.loss_terms() == ()
    both = TransformerLSTMModelSpec(opponent_action=0.5, opponent_prediction=0.1)
    assert both.loss_terms() == ("opponent_action", "opponent_prediction")


@pytest.mark.parametrize("name", sorted(MODEL_TYPES))
def test_every_built_in_type_validates_and_round_trips(name: str) -> None:
    model = {"type": name, "obs_split": SPLIT} if name == "transformer_lstm" else {"type": name}
    spec = _spec(model)
    assert type(spec.model) is MODEL_TYPES[name] and spec.model.type == name
    assert validate_spec_data(spec.dump()) == spec
    assert "type" not in spec.model.settings


@pytest.mark.parametrize("model_type", BUILT_IN_MODEL_TYPES, ids=lambda t: t.__name__)
def test_every_built_in_rl_module_path_resolves(model_type: type[ModelTypeSpec]) -> None:
    module_name, _, attribute = model_type.rl_module.partition(":")
    assert callable(getattr(importlib.import_module(module_name), attribute))


def test_no_model_spec_means_the_default_mlp() -> None:
    assert _spec().model == MLPModelSpec()


def test_a_users_type_is_named_by_import_path() -> None:
    assert model_type_named(TINY) is TinyModelSpec
    spec = _spec({"type": TINY, "width": 7})
    assert isinstance(spec.model, TinyModelSpec) and spec.model.stateful
    assert spec.dump()["model"] == {"type": TINY, "width": 7}
    assert validate_spec_data(spec.dump()) == spec
    parsed, unknown = TinyModelSpec.from_model_config({"width": 3, "vf_share_layers": True})
    assert (parsed.width, parsed.type, unknown) == (3, TINY, ["vf_share_layers"])


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ({"type": "gru"}, "model.type: 'gru' is invalid: expected one of default, lstm, mlp"),
        ({"type": "lstm", "encodr": [8]}, "model.encodr: unknown key; did you mean 'encoder'?"),
        ({"type": TINY, "widht": 3}, "model.widht: unknown key; did you mean 'width'?"),
        ({"type": TINY, "width": 0}, "model.width: 0 is invalid: Input should be greater than 0"),
        ({"type": "no_such.module:Spec"}, "no module named 'no_such'"),
        ({"type": f"{__name__}:SPLIT"}, "must name a subclass of"),
        ({"type": "transformer_lstm"}, "model.obs_split is required for transformer_lstm"),
    ],
)
def test_bad_model_blocks_are_one_line_each(model: dict, expected: str) -> None:
    with pytest.raises(SpecError) as raised:
        _spec(model)
    assert expected in str(raised.value)


DISPATCH = re.compile(
    r"model[._]type\s*(==|!=|\bin\b|\bnot in\b)"  # a type name compared
    r"|isinstance\([^)]*ModelSpec"  # a type's class tested
    r"|\"(lstm|transformer_lstm)\"[,):]"  # a table or call keyed by type name
)


def test_no_code_outside_the_registry_switches_on_the_model_type() -> None:
    """Consumers read capabilities (`stateful`, `opponent_history()`, ...), never the name."""
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not str(path.relative_to(PACKAGE)).startswith(REGISTRY)
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if DISPATCH.search(line)
    ]
    assert found == []
