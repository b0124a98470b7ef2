"""The common base for every spec model, and the integer types of its counts."""

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


class SpecModel(BaseModel):
    """Frozen pydantic model that rejects unknown keys (typos must never pass silently)."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        populate_by_name=True,
        allow_inf_nan=False,  # a NaN stop condition never triggers; inf hides a typo
    )


def _not_a_boolean(value: Any) -> Any:
    # pydantic's lax mode reads `true` as 1 (bool is an int subclass): `num_epochs: true` would
    # train one epoch. Only booleans are refused; a whole float (`1e6`, how YAML reads big
    # counts) and a numeric string (an `${oc.env:...}` value) still pass as they did.
    if isinstance(value, bool):
        raise ValueError("a boolean (true/false) is not a number; write the number")
    return value


Integer = Annotated[int, BeforeValidator(_not_a_boolean)]
"""Every integer a spec declares (counts, sizes, steps, seeds): `true`/`false` refused."""
PositiveInt = Annotated[Integer, Field(gt=0)]
NonNegativeInt = Annotated[Integer, Field(ge=0)]
