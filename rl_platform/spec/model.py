"""The `model:` section: the registry of model types and the field that validates against it.

A model type is a `ModelTypeSpec` subclass (rl_platform/spec/model_type.py). The built-in
types are the files of `rl_platform/spec/model_types/`, each declaring `MODEL_TYPE`; they are
all imported here, so adding one adds a file and edits none. A user's type needs no file in the
package: `model: {type: package.module:SpecClass, ...}` imports it, as `env.id` imports a
user's env (`rl_platform/utils/user_code.py`); the saved `spec.yaml` keeps the import path, so
a rebuilt policy finds it again. Sample Factory registers a model with one call into a
process-wide registry; here the spec names the type, so no import order or global state
decides which types exist.
"""

import importlib
import pkgutil
import typing
from typing import Annotated, Any, Union

from pydantic import PlainValidator, SerializeAsAny, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from rl_platform.spec import model_types
from rl_platform.spec.model_type import ModelTypeSpec
from rl_platform.utils.user_code import UserCodeError, import_user_module, is_entry_point

DEFAULT_MODEL_TYPE = "default"
"""The type of a spec without `model:` or without `model.type` (RLlib's catalog MLP)."""


def type_names(model_type: type[ModelTypeSpec]) -> tuple[str, ...]:
    """The `model.type` values a built-in type accepts (its `type: Literal[...]`)."""
    return typing.get_args(model_type.model_fields["type"].annotation)


def _built_in_types() -> tuple[type[ModelTypeSpec], ...]:
    """`MODEL_TYPE` of every public module in `model_types/`, in file-name order."""
    found = []
    package = model_types.__name__
    for info in sorted(pkgutil.iter_modules(model_types.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        declared = getattr(importlib.import_module(f"{package}.{info.name}"), "MODEL_TYPE", None)
        if not (isinstance(declared, type) and issubclass(declared, ModelTypeSpec)):
            raise TypeError(f"{package}.{info.name} must declare MODEL_TYPE = <ModelTypeSpec>")
        found.append(declared)
    return tuple(found)


def _by_name(types: tuple[type[ModelTypeSpec], ...]) -> dict[str, type[ModelTypeSpec]]:
    names: dict[str, type[ModelTypeSpec]] = {}
    for model_type in types:
        for name in type_names(model_type):
            if name in names:
                raise TypeError(f"model.type {name!r} is declared twice")
            names[name] = model_type
    return names


BUILT_IN_MODEL_TYPES = _built_in_types()
MODEL_TYPES = _by_name(BUILT_IN_MODEL_TYPES)
"""Built-in `model.type` name -> its `ModelTypeSpec` subclass."""


def _user_model_type(path: str) -> type[ModelTypeSpec]:
    module_name, _, attribute = path.partition(":")
    found = getattr(import_user_module(module_name, label=""), attribute, None)
    if not (isinstance(found, type) and issubclass(found, ModelTypeSpec)):
        raise UserCodeError(
            f"{path} must name a subclass of rl_platform.spec.model_type.ModelTypeSpec"
        )
    if not hasattr(found, "rl_module"):
        raise UserCodeError(f"{path} must set `rl_module`, its RLModule (docs/modules.md)")
    return found


def model_type_named(name: str) -> type[ModelTypeSpec]:
    """The type `model.type` names: a built-in, or a user's `package.module:SpecClass`;
    ValueError (a `UserCodeError` for user code) with the choices when it names none."""
    if name in MODEL_TYPES:
        return MODEL_TYPES[name]
    if is_entry_point(name):
        return _user_model_type(name)
    raise ValueError(
        f"expected one of {', '.join(sorted(MODEL_TYPES))}, or package.module:SpecClass for a "
        "model type of your own (docs/modules.md)"
    )


def _errors(title: str, problems: list[tuple[tuple[Any, ...], str, str, Any]]) -> ValidationError:
    """A ValidationError pydantic nests under the field (loc, error type, message, input)."""
    return ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(type=PydanticCustomError(kind, message), loc=loc, input=value)
            for loc, kind, message, value in problems
        ],
    )


def _validated_model(value: Any) -> ModelTypeSpec:
    """The `model:` block as its type's spec. Errors are located under the type's name
    (`model.lstm.encoder`), as a tagged union's are, so `spec/problems.py` finds the fields."""
    if isinstance(value, ModelTypeSpec):
        return value
    if not isinstance(value, dict):
        raise ValueError("expected a mapping, e.g. {type: lstm}")
    name = value.get("type", DEFAULT_MODEL_TYPE)
    try:
        model_type = model_type_named(str(name))
    except ValueError as err:
        raise _errors("model", [(("type",), "model_type", str(err), name)]) from None
    try:
        return model_type.model_validate(value)
    except ValidationError as err:
        problems = [(((name, *e["loc"])), e["type"], e["msg"], e["input"]) for e in err.errors()]
        raise _errors("model", problems) from None


ModelSpec = Annotated[
    SerializeAsAny[Union[BUILT_IN_MODEL_TYPES]],  # noqa: UP007 (a union built from a tuple)
    PlainValidator(_validated_model),
]
"""The `model:` field: any `ModelTypeSpec`, validated by the type its `type` names. The
annotation lists the built-in types (search paths and error hints read it); serialization
follows the instance, so a user's type dumps all its keys."""
