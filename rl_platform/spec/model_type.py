"""What a model type declares: its `model:` keys, its RLModule and its capabilities (no Ray).

A model type is one `ModelTypeSpec` subclass: the pydantic fields are the spec's `model:` keys
(and the RLModule's `model_config`), the class variables and methods below are what the rest
of the platform asks about a model, so no consumer compares `model.type` strings. The spec
finds the built-in types in `rl_platform/spec/model_types/` and a user's type by import path
(`rl_platform/spec/model.py`).

The spec adapter hands each RLModule `model_config = <model keys minus type>`, and the module
parses that dict with the same class (`from_model_config`). RLlib may merge algorithm
auto-includes into a module's config (APPO adds `vf_share_layers`), so module-side parsing
returns unknown keys instead of rejecting them, and turns a wrong value into a `SpecError` the
CLI shows without a traceback.
"""

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Self

from pydantic import ValidationError

from rl_platform.base.errors import SpecError
from rl_platform.spec.base import Integer, SpecModel

Activation = Literal["relu", "tanh", "silu", "gelu", "elu"]


def _flatten_settings(raw: dict[str, Any]) -> dict[str, Any]:
    # A `settings` sub-dict carries module keys; accept them nested or flat.
    settings = raw.get("settings")
    if isinstance(settings, dict):
        return {**{k: v for k, v in raw.items() if k != "settings"}, **settings}
    return dict(raw)


def _problems(error: ValidationError) -> list[str]:
    return [
        f"model.{'.'.join(str(part) for part in e['loc']) or '<root>'}: {e['msg']}"
        for e in error.errors()
    ]


@dataclass(frozen=True)
class OpponentHistoryInputs:
    """A model reads `{obs, opponent_history [H, D], history_mask [H]}` instead of the raw
    observation: the env-to-module connector (RLlib's runner), `HistoryInputs` (the array
    runner) and a rebuilt policy's converter all build it from these two facts."""

    frames: Integer
    """Opponent frames per observation (H)."""
    obs_split: dict[str, Any] | None
    """Own/opponent parts of the raw observation (rl_platform/nets/history_window.py)."""


class ModelTypeSpec(SpecModel):
    """One model type: subclass it, declare `type`, the fields and `rl_module` (module
    docstring; the how-to in docs/architecture.md)."""

    type: str
    """The model type: a built-in name, or `package.module:SpecClass` for a user's type."""

    rl_module: ClassVar[str | type]
    """The RLModule: `package.module:Class` (imported lazily, so the spec never loads Ray) or
    the class itself; or `package.module:function`, a function `(spec) -> RLModuleSpec` for a
    type whose module depends on more than its own keys (the MLP reads the env and algo)."""
    stateful: ClassVar[bool] = False
    """Carries a recurrent state from step to step: multi-agent runs keep a state lookback
    across cut episodes (rl_platform/connectors/state_lookback.py)."""
    off_policy_nets: ClassVar[bool] = False
    """The off-policy array path (SAC, DQN; docs/off_policy.md) builds its actor and critics
    from this type's `hidden` and `activation`."""

    def opponent_history(self) -> OpponentHistoryInputs | None:
        """The opponent-history window this model reads instead of the raw observation (its
        input builder), or None: the model reads observations as the env gives them."""
        return None

    def opponent_actions_key(self) -> str | None:
        """The key (a loss weight, off at 0) that asks for the opponent's action at each step,
        which only the array runner records (`env.runner: vector`); None when none does."""
        return None

    def loss_terms(self) -> tuple[str, ...]:
        """The keys (loss weights, off at 0) that add a term to the learner's loss on RLlib's
        path (`PlatformPPOLearner.compute_loss_for_module`, rl_platform/learners/ppo.py). The
        array learner's step computes PPO and BC only, so a spec with one learns on RLlib's
        path and `training.learner: array` is refused (rl_platform/spec/learner_choice.py)."""
        return ()

    @property
    def settings(self) -> dict[str, Any]:
        """This model's keys minus `type`: the RLModule's `model_config`."""
        return self.model_dump(mode="json", exclude={"type"})

    @classmethod
    def from_model_config(cls, raw: dict[str, Any] | None) -> tuple[Self, list[str]]:
        """Parse an RLModule's `model_config`; returns the model and the keys it does not know."""
        values = _flatten_settings(raw or {})
        values.pop("type", None)
        names = set(cls.model_fields) - {"type"}
        unknown = sorted(k for k in values if k not in names)
        known = {k: v for k, v in values.items() if k in names}
        if cls.model_fields["type"].is_required():  # a user's type: named by its import path
            known["type"] = f"{cls.__module__}:{cls.__qualname__}"
        try:
            model = cls.model_validate(known)
        except ValidationError as error:
            raise SpecError(_problems(error), source="model") from None
        return model, unknown
