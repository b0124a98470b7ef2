"""Turn pydantic validation errors into one readable line per problem.

Each line names the dotted path, the bad value and a hint: the closest valid key for a typo,
the allowed range for a number, the allowed values for a choice.
"""

import difflib
import types
import typing
from typing import Any

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from rl_platform.spec.model import MODEL_TYPES, model_type_named
from rl_platform.spec.training import DQNTraining, PPOTraining, SACTraining

_TRAINING_BY_TAG = {"PPO": PPOTraining, "APPO": PPOTraining, "IMPALA": PPOTraining}
_TRAINING_BY_TAG |= {"DQN": DQNTraining, "SAC": SACTraining}
# Discriminated unions put the tag into the error location: ("training", "PPO", "lr"); so does
# the `model:` field (spec/model.py), whose tag may also be a user's `package.module:SpecClass`.
_UNION_TAGS: dict[str, dict[str, type[BaseModel]]] = {
    "training": _TRAINING_BY_TAG,
    "model": MODEL_TYPES,
}


def _tagged_model(section: Any, tag: Any) -> type[BaseModel] | None:
    """The model a tag in an error location stands for, or None if `tag` is no tag."""
    if tag in _UNION_TAGS.get(section, {}):
        return _UNION_TAGS[section][tag]
    if section == "model" and isinstance(tag, str) and ":" in tag:
        try:
            return model_type_named(tag)  # a user's type, imported while validating
        except ValueError:
            return None
    return None


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation can hold (through Optional, Annotated, dict values)."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        args = typing.get_args(annotation)
        args = args[:1] if origin is typing.Annotated else args
        return [m for arg in args for m in _models_in(arg)]
    if origin is dict:
        return _models_in(typing.get_args(annotation)[1])
    return []


def _walk(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[type[BaseModel] | None, Any]:
    """Follow `loc` through nested models; return (model owning the last key, its FieldInfo)."""
    model: type[BaseModel] | None = root
    field: FieldInfo | None = None
    for index, key in enumerate(loc):
        if model is None:
            return None, None
        tagged = _tagged_model(loc[index - 1], key) if index else None
        if tagged is not None:
            model = tagged
            continue
        field = model.model_fields.get(key) if isinstance(key, str) else None
        if field is None:
            # a dict key (profile name) or list index: stay on the current model
            if index == len(loc) - 1:
                return model, None
            continue
        if index == len(loc) - 1:
            return model, field
        candidates = _models_in(field.annotation)
        model = candidates[0] if candidates else None
    return model, field


def _dotted(loc: tuple[Any, ...]) -> str:
    parts = [
        str(p)
        for i, p in enumerate(loc)
        if not (i == 1 and _tagged_model(loc[0], p) is not None) and p != "[key]"
    ]
    return ".".join(parts) or "<root>"


def _range_hint(field: FieldInfo | None) -> str:
    if field is None:
        return ""
    bounds = []
    for meta in field.metadata:
        if isinstance(meta, Gt):
            bounds.append(f"> {meta.gt}")
        elif isinstance(meta, Ge):
            bounds.append(f">= {meta.ge}")
        elif isinstance(meta, Lt):
            bounds.append(f"< {meta.lt}")
        elif isinstance(meta, Le):
            bounds.append(f"<= {meta.le}")
    return f" (allowed range: {' and '.join(bounds)})" if bounds else ""


def _one_line(root: type[BaseModel], error: dict[str, Any]) -> str:
    loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    path, kind, value = _dotted(loc), error["type"], error.get("input")
    model, field = _walk(root, loc)
    if kind == "extra_forbidden":
        valid = sorted(f.alias or n for n, f in model.model_fields.items()) if model else []
        valid = [v for v in valid if v != "algo"]
        close = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(valid)}"
        return f"{path}: unknown key; {hint}"
    if kind == "union_tag_invalid":
        tag = error.get("ctx", {}).get("tag")
        choices = ", ".join(sorted(_UNION_TAGS.get(str(loc[-1]), {}))) or "see docs"
        return f"{path}.type: {tag!r} is invalid: expected one of {choices}"
    if kind == "missing":
        return f"{path}: required key is missing"
    message = error["msg"].removeprefix("Value error, ")
    if not loc:  # a rule across sections: its message names the fields
        return message
    if isinstance(value, dict):  # a rule across one section's fields: its message names them
        return f"{path}: {message}"
    if kind in {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}:
        message += _range_hint(field)
    return f"{path}: {_short(value)} is invalid: {message}"


def describe_validation_error(root: type[BaseModel], error: ValidationError) -> list[str]:
    """One line per problem, deduplicated, in file order."""
    lines: list[str] = []
    for item in error.errors(include_url=False):
        if item["type"] == "union_tag_invalid" and tuple(item["loc"]) == ("training",):
            continue  # the top-level `algo` error already says which algorithms exist
        line = _one_line(root, item)
        if line not in lines:
            lines.append(line)
    return lines
