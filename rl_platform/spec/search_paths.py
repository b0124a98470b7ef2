"""Which dotted spec paths a search may vary, and their canonical (file-format) spelling.

A path must name a field of the experiment schema (`training.lr`, `model.hidden`, `bc.coef`), or
a key inside a free-form mapping (`env.kwargs.gravity`, `league.opponent_mix.based`). Tagged
sections (`training` by `algo`, `model` by `model.type`) accept the fields of any of their
models here; `rlp search` checks the spec's own models (and that `league:`/`bc:` exist) before
it starts. Only hyperparameter sections are searchable: budgets belong to the scheduler, names
and logging to the search itself.
"""

import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

SEARCHABLE = ("seed", "env", "training", "model", "health", "league", "bc")
_LEAF, _MAPPING, _SECTION = "leaf", "mapping", "section"
# Sections whose model depends on a tag (`algo`, `model.type`): a path is valid if any of the
# section's models has it, unless the caller names the spec's own models.
Unions = Mapping[str, Sequence[type[BaseModel]]]


def _submodels(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (through Annotated, Optional and unions)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _submodels(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _submodels(arg)]
    return []


def _is_mapping(annotation: Any) -> bool:
    """A dict, or a union holding one (`league.opponent_mix`: a mix or a schedule)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_is_mapping(arg) for arg in typing.get_args(annotation))
    return annotation is dict or origin is dict


def _walk(models: Sequence[type[BaseModel]], prefix: str, out: dict[str, tuple[str, str]]) -> None:
    """Fill `out` with path -> (canonical path, kind); field names and aliases both accepted."""
    for model in models:
        for name, field in model.model_fields.items():
            if name == "algo" and prefix == "training.":
                continue  # the routing tag, set from the top-level `algo`
            canonical = f"{prefix}{field.alias or name}"
            subs = _submodels(field.annotation)
            kind = _SECTION if subs else _MAPPING if _is_mapping(field.annotation) else _LEAF
            for spelling in (canonical, f"{prefix}{name}"):
                out.setdefault(spelling, (canonical, kind))
            if subs:
                _walk(subs, f"{canonical}.", out)


def searchable_paths(
    schema: type[BaseModel], unions: Unions | None = None
) -> dict[str, tuple[str, str]]:
    """Every searchable path of `schema` (any spelling) -> (canonical path, kind)."""
    out: dict[str, tuple[str, str]] = {}
    for section in SEARCHABLE:
        field = schema.model_fields[section]
        models = (unions or {}).get(section) or _submodels(field.annotation)
        if models:
            out[section] = (section, _SECTION)
            _walk(models, f"{section}.", out)
        else:
            out[section] = (section, _LEAF)
    return out


def spec_unions(spec: Any) -> Unions:
    """The models this spec actually uses for its tagged sections."""
    return {"training": [type(spec.training)], "model": [type(spec.model)]}


def _problem(path: str, known: dict[str, tuple[str, str]], schema: type[BaseModel]) -> str:
    top = path.split(".")[0]
    if top in schema.model_fields and top not in SEARCHABLE:
        return (
            f"not searchable: only {', '.join(SEARCHABLE)} (and keys inside them) can be "
            "varied; budgets are set by the scheduler"
        )
    if path in known and known[path][1] == _SECTION:
        fields = sorted(p for p, (c, _) in known.items() if p == c and p.startswith(path + "."))
        return f"a section, not a field; name one of its fields, e.g. {', '.join(fields[:4])}"
    leaves = sorted(c for c, kind in known.values() if kind != _SECTION)
    close = difflib.get_close_matches(path, leaves, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else "see docs/specs.md for the fields"
    return f"not a field of the spec; {hint}"


def canonical_param_path(
    path: str, *, schema: type[BaseModel], unions: Unions | None = None
) -> str:
    """The file-format spelling of a searchable `path` of `schema` (the experiment spec's class,
    passed in because that class holds the `search:` block this checks); `ValueError` with a
    hint otherwise."""
    known = searchable_paths(schema, unions)
    parts = path.split(".")
    if all(parts):
        if path in known and known[path][1] != _SECTION:
            return known[path][0]
        # a key inside a free-form mapping such as env.kwargs or model.settings
        for cut in range(len(parts) - 1, 0, -1):
            head = ".".join(parts[:cut])
            if head in known and known[head][1] == _MAPPING:
                return ".".join([known[head][0], *parts[cut:]])
    raise ValueError(_problem(path, known, schema))
