"""Load a spec file: `_base` includes, a profile, `--set` overrides, `${...}` interpolation,
then validation. Every failure becomes a `SpecError` with one line per problem.
"""

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from pydantic import ValidationError

from rl_platform.base.errors import SpecError
from rl_platform.spec.experiment import BUDGET_SECTIONS, PROFILE_ENV_KEYS, ExperimentSpec
from rl_platform.spec.interpolation_budget import (
    InterpolationTooDeep,
    InterpolationTooLarge,
    check_interpolation_budget,
    check_nesting,
)
from rl_platform.spec.problems import describe_validation_error
from rl_platform.spec.shown_fields import secrets_shown
from rl_platform.utils.safe_yaml import MAX_TEXT_CHARS, YamlLimitError, YamlTagError, parse_yaml
from rl_platform.utils.secrets import mask_text, secret_values

BASE_KEY = "_base"


def _read_mapping(path: Path, source: str) -> dict[str, Any]:
    if path.is_dir():
        raise SpecError(
            [f"{path}: is a folder, not a spec file; name the YAML file"], source=source
        )
    if path.exists() and not path.is_file():
        raise SpecError([f"{path}: not a regular file; a spec is a YAML file"], source=source)
    if not path.is_file():
        raise SpecError([f"{path}: file not found"], source=source)
    if path.stat().st_size > 4 * MAX_TEXT_CHARS:  # before reading: a spec is a few KiB
        raise SpecError([f"{path}: {path.stat().st_size} bytes is not a spec"], source=source)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            [f"{path}: not UTF-8 text (byte {exc.start}); save the spec as UTF-8"], source=source
        ) from None
    try:
        data = parse_yaml(text)
    except (YamlTagError, YamlLimitError) as exc:
        raise SpecError([f"{path}: {exc}"], source=source) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError([f"{path}: not valid YAML: {where}{problem}"], source=source) from None
    if data is None:
        raise SpecError(
            [f"{path}: the file is empty; a spec needs at least `name` and `env`"], source=source
        )
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise SpecError(
            [f"{path}: top level must be a mapping of sections, got {kind}"], source=source
        )
    return data


def _load_with_bases(path: Path, source: str, seen: tuple[Path, ...] = ()) -> DictConfig:
    """Merge `_base` files (in order, each resolved relative to its includer) under this one."""
    try:
        path = path.resolve()
    except (RuntimeError, OSError):  # Python 3.11 reports a link loop as RuntimeError
        raise SpecError(
            [f"{path}: a symbolic link loop, not a spec file; point it (or {BASE_KEY}) at a file"],
            source=source,
        ) from None
    if path in seen:
        chain = " -> ".join(str(p) for p in (*seen, path))
        raise SpecError([f"{BASE_KEY}: include cycle {chain}"], source=source)
    data = _read_mapping(path, source)
    bases = data.pop(BASE_KEY, [])
    if isinstance(bases, str):
        bases = [bases]
    if not isinstance(bases, list) or not all(isinstance(b, str) for b in bases):
        raise SpecError(
            [f"{BASE_KEY}: {bases!r} is invalid: expected a list of file paths"], source=source
        )
    try:
        check_nesting(data)
    except InterpolationTooDeep as exc:
        raise SpecError([f"{path}: {exc}"], source=source) from None
    merged = OmegaConf.create()
    for base in bases:
        merged = OmegaConf.merge(
            merged, _load_with_bases(path.parent / base, source, (*seen, path))
        )
    try:
        return OmegaConf.merge(merged, OmegaConf.create(data))
    except OmegaConfBaseException as exc:
        raise SpecError([f"{path}: {exc}"], source=source) from None


def _apply_profile(config: DictConfig, profile: str, source: str) -> DictConfig:
    profiles = config.get("profiles") or {}
    if profile not in profiles:
        available = ", ".join(sorted(profiles)) or "none declared"
        raise SpecError(
            [f"profiles.{profile}: no such profile (available: {available})"], source=source
        )
    chosen = profiles[profile]
    extra = set(chosen) - set(BUDGET_SECTIONS)
    env_keys = set(chosen.get("env") or {}) - set(PROFILE_ENV_KEYS)
    if env_keys and not extra:
        raise SpecError(
            [
                f"profiles.{profile}.env.{sorted(env_keys)[0]}: profiles may only set "
                f"env.{', env.'.join(PROFILE_ENV_KEYS)} in env"
            ],
            source=source,
        )
    if extra:
        raise SpecError(
            [
                f"profiles.{profile}.{sorted(extra)[0]}: profiles may only override "
                f"{', '.join(BUDGET_SECTIONS)}"
            ],
            source=source,
        )
    overlay = {section: chosen[section] for section in BUDGET_SECTIONS if section in chosen}
    return OmegaConf.merge(config, OmegaConf.create(overlay))


def _checked_key(key: str, item: str) -> str:
    if not key or "=" in key or any(not part for part in key.split(".")):
        raise SpecError(
            [
                f"--set {item!r}: expected KEY=VALUE with a dotted key, e.g. training.lr=3e-4, "
                "or ~KEY to remove a key"
            ]
        )
    return key


def parse_override(item: str) -> tuple[str, Any]:
    """`a.b=value` -> ("a.b", parsed value). Values are YAML scalars/lists (`[64, 64]`, `3e-4`).
    A value that is not YAML (or carries a tag) stays the literal text; YAML that breaks a
    parsing limit (a key given twice in `{lr: 1, lr: 2}`, an alias bomb) is refused."""
    key, sep, raw = item.partition("=")
    key = _checked_key(key.strip() if sep else "", item)
    try:
        value = parse_yaml(raw) if raw.strip() else ""
    except YamlLimitError as exc:
        raise SpecError([f"--set {key}: {exc}"]) from None
    except (YamlTagError, yaml.YAMLError):
        value = raw  # not YAML: keep the literal text
    return key, value


def _delete_key(config: DictConfig, key: str) -> None:
    """`--set ~a.b` removes `b` from the mapping `a`, as Hydra's `~` does: a plain `--set` merges
    a mapping into the one there, so this is how to drop an entry (a profile's custom resource,
    say) and leave the field to its default."""
    parent_key, _, leaf = key.rpartition(".")
    parent = OmegaConf.select(config, parent_key) if parent_key else config
    if not isinstance(parent, DictConfig) or leaf not in parent:
        raise SpecError([f"--set ~{key}: no such key to remove; check the spelling"])
    del parent[leaf]


def _apply_overrides(config: DictConfig, overrides: list[str]) -> DictConfig:
    for item in overrides:
        if item.startswith("~"):
            _delete_key(config, _checked_key(item[1:].strip(), item))
            continue
        key, value = parse_override(item)
        try:
            check_nesting(value, key=f"--set {key}")
            OmegaConf.update(config, key, value, merge=True, force_add=True)
        except InterpolationTooDeep as exc:
            raise SpecError([str(exc)]) from None
        except OmegaConfBaseException as exc:
            raise SpecError([f"--set {key}: cannot apply: {exc}".splitlines()[0]]) from None
    return config


def _resolve(config: DictConfig, source: str) -> dict[str, Any]:
    try:
        check_interpolation_budget(OmegaConf.to_container(config, resolve=False))  # type: ignore[arg-type]
    except InterpolationTooLarge as exc:
        raise SpecError([str(exc)], source=source) from None
    try:
        return OmegaConf.to_container(config, resolve=True)  # type: ignore[return-value]
    except RecursionError:  # a chain of references too long for OmegaConf's recursion
        raise SpecError(
            ["<interpolation>: `${...}` references chained or nested too deeply to resolve"],
            source=source,
        ) from None
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", "") or "<interpolation>"
        detail = str(exc).splitlines()[0]
        raise SpecError([f"{key}: cannot resolve interpolation: {detail}"], source=source) from None


def resolve_spec_data(
    path: str | Path, *, overrides: list[str] | None = None, profile: str | None = None
) -> dict[str, Any]:
    """The merged, profiled, overridden and interpolated spec as plain data (not yet validated)."""
    source = str(path)
    config = _load_with_bases(Path(path), source)
    if profile:
        config = _apply_profile(config, profile, source)
    config = _apply_overrides(config, overrides or [])
    with _secrets_masked(OmegaConf.to_container(config, resolve=False)):
        return _resolve(config, source)


@contextlib.contextmanager
def _secrets_masked(data: Any) -> Iterator[None]:
    """A `SpecError` raised inside names no secret value of `data` (an error line quotes the
    bad value, which may be a secret interpolated into another field, or given with `--set`)."""
    try:
        yield
    except SpecError as exc:
        secrets = secret_values(data)
        problems = [mask_text(problem, secrets) for problem in exc.problems]
        raise SpecError(problems, source=exc.source) from None


def validate_spec_data(data: dict[str, Any], *, source: str = "spec") -> ExperimentSpec:
    with _secrets_masked(data):
        try:
            spec = ExperimentSpec.model_validate(data)
        except ValidationError as exc:
            raise SpecError(describe_validation_error(ExperimentSpec, exc), source=source) from None
        problems = secrets_shown(spec, secret_values(data))
        if problems:
            raise SpecError(problems, source=source)
        return spec


def load_spec(
    path: str | Path, *, overrides: list[str] | None = None, profile: str | None = None
) -> ExperimentSpec:
    """Load, merge, override and validate a spec file. Raises `SpecError` on any problem."""
    data = resolve_spec_data(path, overrides=overrides, profile=profile)
    return validate_spec_data(data, source=str(path))
