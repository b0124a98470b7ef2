"""Policy URIs: the one syntax for naming a policy anywhere (eval, run, watch, league).

    checkpoint://RUN_DIR[/CHECKPOINT][?module=main&sample=true]
    scripted://ENV/NAME[?param=value]
    scripted://package.module:act_fn          (a user's agent, `act(obs, rng) -> actions[B]`)
    league://RUN_DIR/MEMBER[?sample=true]
    policy://FILE.safetensors[?sample=true]   (a file written by `rlp export`)
    random

Paths may be relative (`checkpoint://runs/cartpole_ppo/20250101-120000`) or absolute
(`checkpoint:///data/runs/...`). A trailing `iter_NNNNNN` (or `latest`) component of a
checkpoint URI names one checkpoint (`best`: the best evaluated one, kept by runs with an
`evaluation:` block); without it the run's latest checkpoint is used.

Pure parsing: nothing is read from disk here (see `rl_platform.policies.loading`).
"""

import difflib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import parse_qsl

from rl_platform.base.errors import UserError
from rl_platform.utils.user_code import is_entry_point


class PolicyKind(StrEnum):
    CHECKPOINT = "checkpoint"
    SCRIPTED = "scripted"
    LEAGUE = "league"
    POLICY = "policy"
    RANDOM = "random"


_SCHEMES = tuple(kind.value for kind in PolicyKind)
BEST_NAME = "best"
"""How a policy URI names the best evaluated checkpoint: `checkpoint://RUN/best`."""
_CHECKPOINT_NAME = re.compile(rf"^(iter_\d{{6,}}|latest|{BEST_NAME})$")
# Keys every learned policy understands; scripted policies take their own parameters.
_LEARNED_PARAMS = {
    PolicyKind.CHECKPOINT: {"module", "sample"},
    PolicyKind.LEAGUE: {"sample"},
    PolicyKind.POLICY: {"sample"},
}
EXPORTED_SUFFIX = ".safetensors"
"""The one format a `policy://` file may have: weights never go through pickle."""
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}

EXAMPLES = (
    "checkpoint://runs/cartpole_ppo/20250101-120000",
    "checkpoint://runs/duel_selfplay/20250101-120000/iter_000040?module=main",
    "scripted://duel/based",
    "league://runs/duel_selfplay/20250101-120000/main_v3",
    "policy://experiments/pretrained/duel_recipe.safetensors",
    "random",
)


@dataclass(frozen=True)
class PolicyURI:
    """A parsed policy URI; `text` is the original string (used as the policy's label)."""

    kind: PolicyKind
    text: str
    path: str | None = None
    """Run folder (checkpoint, league), or the exported file (policy)."""
    checkpoint: str | None = None
    """`iter_NNNNNN` / `latest` / `best` of a checkpoint URI, else None (latest)."""
    env: str | None = None
    """Scripted policies: the env short name (`duel`, `cartpole`, `connect_four`)."""
    name: str | None = None
    """Scripted agent name or league member id."""
    params: dict[str, str] = field(default_factory=dict)

    @property
    def module(self) -> str | None:
        return self.params.get("module")

    @property
    def sample(self) -> bool | None:
        """`?sample=` as a bool; None when not given (the caller's default applies)."""
        raw = self.params.get("sample")
        return None if raw is None else parse_bool(raw, what=f"{self.text}: sample")


def parse_bool(raw: str, *, what: str) -> bool:
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise UserError(f"{what}={raw!r}: expected true or false")


def _usage() -> str:
    return "policy URIs look like: " + ", ".join(EXAMPLES)


def _split_query(text: str, rest: str) -> tuple[str, dict[str, str]]:
    body, _, query = rest.partition("?")
    if not query:
        return body, {}
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
    bad = [part for part in query.split("&") if "=" not in part]
    if bad or not pairs:
        raise UserError(f"{text}: query {query!r} must be key=value pairs joined by '&'")
    params: dict[str, str] = {}
    for key, value in pairs:
        if key in params:
            raise UserError(f"{text}: parameter {key!r} is given twice")
        params[key] = value
    return body, params


def _scheme_of(text: str) -> tuple[str, str]:
    scheme, sep, rest = text.partition("://")
    if sep:
        return scheme, rest
    if text in _SCHEMES or ":" not in text:
        return text, ""
    scheme, _, rest = text.partition(":")
    return scheme, rest


def _unknown_scheme(text: str, scheme: str) -> UserError:
    close = difflib.get_close_matches(scheme.lower(), _SCHEMES, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]}://?" if close else ""
    if not scheme or "/" in scheme or scheme.startswith("."):
        hint = f" For a run folder write checkpoint://{text}."
    return UserError(f"unknown policy {text!r}.{hint} {_usage()}")


def parse_policy_uri(text: str) -> PolicyURI:
    """Parse `text`; raise `UserError` with an example for anything malformed."""
    text = text.strip()
    if not text:
        raise UserError(f"empty policy; {_usage()}")
    scheme, rest = _scheme_of(text)
    try:
        kind = PolicyKind(scheme.lower())
    except ValueError:
        raise _unknown_scheme(text, scheme) from None
    if kind == PolicyKind.RANDOM:
        if rest:
            raise UserError(f"{text}: `random` takes no path or parameters")
        return PolicyURI(kind=kind, text=text)
    body, params = _split_query(text, rest)
    body = body.rstrip("/")
    allowed = _LEARNED_PARAMS.get(kind)
    unknown = sorted(set(params) - allowed) if allowed is not None else []
    if unknown:
        raise UserError(
            f"{text}: unknown parameter(s) {unknown}; {kind}:// takes {sorted(allowed or [])}"
        )
    parsed = _PARSERS[kind](text, body)
    result = PolicyURI(kind=kind, text=text, params=params, **parsed)
    _ = result.sample  # validate a `sample=` value now rather than at first use
    return result


def _parse_checkpoint(text: str, body: str) -> dict[str, str | None]:
    if not body:
        raise UserError(f"{text}: missing run folder, e.g. {EXAMPLES[0]}")
    head, _, last = body.rpartition("/")
    if head and _CHECKPOINT_NAME.match(last):
        # `.../checkpoints/iter_000010` and `.../iter_000010` both name the same checkpoint.
        head = head.removesuffix("/checkpoints") if head != "checkpoints" else head
        return {"path": head, "checkpoint": last}
    return {"path": body.removesuffix("/checkpoints") or body, "checkpoint": None}


def _parse_scripted(text: str, body: str) -> dict[str, str | None]:
    if is_entry_point(body):  # a user's agent, scripted://package.module:act_fn
        return {"env": None, "name": body}
    env, _, name = body.partition("/")
    if not env or not name or "/" in name:
        raise UserError(
            f"{text}: expected scripted://ENV/NAME, e.g. scripted://duel/based, or "
            "scripted://package.module:act_fn"
        )
    return {"env": env, "name": name}


def _parse_league(text: str, body: str) -> dict[str, str | None]:
    path, _, member = body.rpartition("/")
    if not path or not member:
        raise UserError(f"{text}: expected league://RUN_DIR/MEMBER, e.g. {EXAMPLES[3]}")
    return {"path": path, "name": member}


def _parse_exported(text: str, body: str) -> dict[str, str | None]:
    if not body:
        raise UserError(f"{text}: missing file, e.g. {EXAMPLES[4]}")
    if not body.endswith(EXPORTED_SUFFIX):
        raise UserError(
            f"{text}: policy:// takes a {EXPORTED_SUFFIX} file written by `rlp export` "
            "(weights are never unpickled); for a run folder write checkpoint://PATH"
        )
    return {"path": body}


_PARSERS = {
    PolicyKind.CHECKPOINT: _parse_checkpoint,
    PolicyKind.SCRIPTED: _parse_scripted,
    PolicyKind.LEAGUE: _parse_league,
    PolicyKind.POLICY: _parse_exported,
}
