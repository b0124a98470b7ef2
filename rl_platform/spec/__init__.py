"""Experiment specs: pydantic schema, YAML loading with includes, profiles and overrides."""

from rl_platform.spec.experiment import ExperimentSpec, ProfileSpec
from rl_platform.spec.loading import (
    load_spec,
    parse_override,
    resolve_spec_data,
    validate_spec_data,
)

__all__ = [
    "ExperimentSpec",
    "ProfileSpec",
    "load_spec",
    "parse_override",
    "resolve_spec_data",
    "validate_spec_data",
]
