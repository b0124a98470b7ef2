"""The common base for every spec model: frozen, strict about unknown keys, documented fields."""

from pydantic import BaseModel, ConfigDict


class SpecModel(BaseModel):
    """Frozen pydantic model that rejects unknown keys (typos must never pass silently)."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        populate_by_name=True,
        allow_inf_nan=False,  # a NaN stop condition never triggers; inf hides a typo
    )
