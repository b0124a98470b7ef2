"""Whether a policy from elsewhere can join a league: the league's slots load every member
into main's architecture, so names and shapes must match; without weights to compare with,
the source run's spec must name the league's env and model."""

from pathlib import Path
from typing import Any

from rl_platform.base.errors import UserError


def check_fits(weights: dict[str, Any], *, reference: dict[str, Any] | None, what: str) -> None:
    """`weights` have the tensors (names and shapes) of `reference`; nothing to check without
    one."""
    if reference is None:
        return
    shapes = {k: tuple(v.shape) for k, v in weights.items()}
    expected = {k: tuple(v.shape) for k, v in reference.items()}
    if shapes != expected:
        differing = sorted(
            k for k in set(shapes) | set(expected) if shapes.get(k) != expected.get(k)
        )
        raise UserError(
            f"{what}: weights do not fit this league's model (differing tensors: "
            f"{differing[:5]}{'...' if len(differing) > 5 else ''}); train it with the same model"
        )


def check_same_setup(source: Path, source_spec: Any | None, spec: Any) -> None:
    """The source run's spec (None: it has none) names the league run's env and model."""
    if source_spec is None:
        raise UserError(
            f"{source}: cannot check that it fits this league (the league has no checkpoint or "
            "stored member yet, and no spec.yaml is beside the checkpoint); add it after the "
            "league run's first checkpoint"
        )
    if source_spec.env.id != spec.env.id:
        raise UserError(
            f"{source} was trained on {source_spec.env.id}; this league plays {spec.env.id}"
        )
    if source_spec.model != spec.model:
        raise UserError(
            f"{source}: its model ({source_spec.model.type}) differs from this league's "
            f"({spec.model.type}); train it with the same `model:` block"
        )
