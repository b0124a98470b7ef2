"""Turn a policy URI into a `Policy` for one env (its id and spaces).

* `random`: uniform over the action space (legal actions only under an action mask).
* `scripted://ENV/NAME`: the registry in `rl_platform.teachers`; ENV must match the env.
* `checkpoint://RUN[/iter_N][?module=ID]`: the run's spec rebuilds the module, the checkpoint
  provides its weights, and its observation filter's statistics where the run had one
  (`env.observation_filter`). `scripted_<agent>` module ids of a league run play that
  scripted agent.
* `league://RUN/MEMBER`: frozen members load their weights from the pool (hash-checked),
  learners (main, exploiters) from the run's latest checkpoint, scripted members their agent.
* `policy://FILE.safetensors`: a file of `rlp export`, which carries the spec that rebuilds it.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from loguru import logger

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import trained_module_in
from rl_platform.league.slots import SCRIPTED_PREFIX
from rl_platform.policies.base import FunctionPolicy, Policy, RandomPolicy
from rl_platform.policies.exported import read_exported
from rl_platform.policies.observation_filter import ObservationFilter, observation_filter_in
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
from rl_platform.spec.policy_uri import BEST_NAME, PolicyKind, PolicyURI, parse_policy_uri
from rl_platform.storage.layout import CHECKPOINTS_DIR, LATEST_FILE, LEAGUE_DIR


@dataclass(frozen=True)
class EnvContext:
    """What a policy needs to know about the env it acts in (one agent's view)."""

    env_id: str
    observation_space: gym.Space
    action_space: gym.Space


def load_policy(uri: str | PolicyURI, *, env: EnvContext, sample: bool = False) -> Policy:
    """Build the policy; `sample` (sampled instead of greedy actions) unless the URI says."""
    parsed = parse_policy_uri(uri) if isinstance(uri, str) else uri
    sample = parsed.sample if parsed.sample is not None else sample
    if parsed.kind == PolicyKind.RANDOM:
        return RandomPolicy(parsed.text, env.action_space)
    if parsed.kind == PolicyKind.SCRIPTED and parsed.env is None:  # scripted://pkg.mod:act
        return _scripted_for_env(parsed.text, str(parsed.name), env)
    if parsed.kind == PolicyKind.SCRIPTED:
        return _scripted(parsed.text, env_short=parsed.env, name=parsed.name, env=env, uri=parsed)
    if parsed.kind == PolicyKind.CHECKPOINT:
        return _from_checkpoint(parsed, env=env, sample=sample)
    if parsed.kind == PolicyKind.POLICY:
        return _from_exported(parsed, env=env, sample=sample)
    return _from_league(parsed, env=env, sample=sample)


def _scripted(
    label: str, *, env_short: str | None, name: str | None, env: EnvContext, uri: PolicyURI | None
) -> Policy:
    from rl_platform.teachers import get_scripted

    entry = get_scripted(str(env_short), str(name))
    if entry.env_id != env.env_id:
        raise UserError(f"{label} plays {entry.env_id}, not {env.env_id}")
    params = {} if uri is None or uri.kind != PolicyKind.SCRIPTED else uri.params
    return FunctionPolicy(label, entry.build(params))


def _scripted_for_env(label: str, agent: str, env: EnvContext) -> Policy:
    """A league's scripted member: a registry name, `random`, or a user's entry point."""
    from rl_platform.teachers import scripted_act

    act = scripted_act(env_id=env.env_id, agent=agent, action_space=env.action_space)
    return FunctionPolicy(label, act)


def _existing(path: str | None, *, label: str) -> Path:
    folder = Path(str(path)).expanduser()
    if not folder.exists():
        raise UserError(f"{label}: {folder} does not exist")
    return folder


@dataclass(frozen=True)
class CheckpointModules:
    """What a `checkpoint://` URI names in its checkpoint."""

    path: Path
    module_id: str | None
    """`?module=`, or the first trained module present."""
    weights: dict[str, Any]
    """Every module's weights, by module id."""
    algorithm_state: dict[str, Any]
    """The checkpoint's whole algorithm state (the filter's statistics are read from it)."""

    def observation_filter(self, label: str) -> ObservationFilter | None:
        """The run's observation filter (`env.observation_filter`), None if it had none."""
        where = f"{self.path}/{ALGORITHM_PART}"
        return observation_filter_in(self.algorithm_state, where=where, label=label)


def checkpoint_modules(uri: PolicyURI) -> CheckpointModules:
    """The checkpoint folder a `checkpoint://` URI names, its modules and filter."""
    from rl_platform.storage.checkpoints import (
        CheckpointStore,
        load_checkpoint,
        resolve_checkpoint,
    )

    folder = _existing(uri.path, label=uri.text)
    if uri.checkpoint == BEST_NAME:
        best = CheckpointStore(folder / CHECKPOINTS_DIR).best()
        if best is None:
            raise UserError(
                f"{uri.text}: {folder} has no best checkpoint (it is kept by runs with an "
                "`evaluation:` block)"
            )
        folder = best
    elif uri.checkpoint is not None and uri.checkpoint != LATEST_FILE:
        named = folder / CHECKPOINTS_DIR / uri.checkpoint
        if not named.is_dir():
            raise UserError(f"{uri.text}: no checkpoint {named}")
        folder = named
    loaded = load_checkpoint(resolve_checkpoint(folder))
    state = loaded.parts[ALGORITHM_PART]
    weights = module_weights(state)
    return CheckpointModules(
        path=loaded.path,
        module_id=uri.module or trained_module_in(weights),
        weights=weights,
        algorithm_state=state,
    )


def learned_parts(uri: str) -> tuple[Any, dict[str, np.ndarray], ObservationFilter | None]:
    """(run spec, module weights, observation filter) of a `checkpoint://` or `policy://` policy:
    everything `learned_policy` needs, to ship to processes that cannot read the run folder."""
    from rl_platform.policies.rebuild import run_dir_of
    from rl_platform.storage.saved_spec import read_saved_spec

    parsed = parse_policy_uri(uri)
    if parsed.kind == PolicyKind.POLICY:  # an exported file carries all three itself
        exported = read_exported(Path(str(parsed.path)).expanduser(), label=uri)
        return exported.spec, exported.weights, exported.observation_filter
    found = checkpoint_modules(parsed)
    if found.module_id not in found.weights:
        raise UserError(f"{uri}: module {found.module_id!r} is not in {found.path}")
    spec = read_saved_spec(run_dir_of(found.path))
    return spec, found.weights[found.module_id], found.observation_filter(uri)


def _from_checkpoint(uri: PolicyURI, *, env: EnvContext, sample: bool) -> Policy:
    found = checkpoint_modules(uri)
    module_id = found.module_id
    if module_id is not None and module_id.startswith(SCRIPTED_PREFIX):
        return _scripted_for_env(uri.text, module_id.removeprefix(SCRIPTED_PREFIX), env)
    if module_id not in found.weights:
        raise UserError(
            f"{uri.text}: module {module_id!r} is not in {found.path} "
            f"(modules: {', '.join(sorted(found.weights))}); pick one with ?module=ID"
        )
    logger.info("{}: {} module {!r}", uri.text, found.path, module_id)
    return _learned(
        uri.text,
        found.path,
        found.weights[module_id],
        env=env,
        sample=sample,
        observation_filter=found.observation_filter(uri.text),
    )


def _from_exported(uri: PolicyURI, *, env: EnvContext, sample: bool) -> Policy:
    """The file's policy acting in `env`; refused in one line when its model does not fit."""
    found = read_exported(Path(str(uri.path)).expanduser(), label=uri.text)
    if found.spec.env.id != env.env_id:
        raise UserError(f"{uri.text} was trained on {found.spec.env.id}, not {env.env_id}")
    try:
        return learned_policy(
            found.spec,
            found.weights,
            env=env,
            sample=sample,
            label=uri.text,
            observation_filter=found.observation_filter,
        )
    except UserError as exc:
        first_line = str(exc).splitlines()[0]
        raise UserError(f"{uri.text}: its model does not fit {env.env_id}: {first_line}") from None


def _from_league(uri: PolicyURI, *, env: EnvContext, sample: bool) -> Policy:
    from rl_platform.league import LeaguePool, MemberKind

    run_dir = _existing(uri.path, label=uri.text)
    root = run_dir / LEAGUE_DIR
    pool, _ = LeaguePool.open(root)  # read-only: never prune a live writer's files
    if not pool.manifest_exists():
        raise UserError(f"{uri.text}: {run_dir} has no league ({root}/league.json is missing)")
    member = pool.get(str(uri.name))
    if member.kind == MemberKind.SCRIPTED:
        return _scripted_for_env(uri.text, str(member.metadata.get("agent", member.id)), env)
    if member.is_learner:
        # A learner's current weights live in the run's checkpoints, under its own module id.
        checkpoint = PolicyURI(
            PolicyKind.CHECKPOINT, uri.text, path=str(run_dir), params={"module": member.id}
        )
        return _from_checkpoint(checkpoint, env=env, sample=sample)
    weights = {name: tensor.numpy() for name, tensor in pool.load_weights(member.id).items()}
    return _learned(uri.text, run_dir, weights, env=env, sample=sample)


def _learned(
    label: str,
    path: Path,
    weights: dict[str, np.ndarray],
    *,
    env: EnvContext,
    sample: bool,
    observation_filter: ObservationFilter | None = None,
) -> Policy:
    from rl_platform.policies.rebuild import run_dir_of
    from rl_platform.storage.saved_spec import read_saved_spec

    spec = read_saved_spec(run_dir_of(path))
    if spec.env.id != env.env_id:
        raise UserError(f"{label} was trained on {spec.env.id}, not {env.env_id}")
    return learned_policy(
        spec, weights, env=env, sample=sample, label=label, observation_filter=observation_filter
    )


def learned_policy(
    spec: Any,
    weights: dict[str, np.ndarray] | None,
    *,
    env: EnvContext,
    sample: bool,
    label: str,
    device: str = "cpu",
    policy_class: Callable[..., Policy] | None = None,
    observation_filter: ObservationFilter | None = None,
) -> Policy:
    """A policy acting with `spec`'s model and these weights (a checkpoint's, or the live
    weights of a run being evaluated while it trains; None: fresh initial weights), on
    `device`. `policy_class` builds it from `(label, rebuilt, sample=, converter=, device=,
    view=, observation_filter=)`: `ModulePolicy` or a subclass (a `functools.partial` carries
    its own settings). The policy sees what `spec` showed it in training (`env.hide`, then
    `observation_filter`, the statistics of the same checkpoint as the weights)."""
    from rl_platform.policies.module_policy import ModulePolicy
    from rl_platform.policies.rebuild import build_module, history_converter

    if spec.env.observation_filter != "none" and observation_filter is None:
        # Acting on raw observations would be a silently wrong policy.
        raise UserError(
            f"{label} was trained with env.observation_filter {spec.env.observation_filter}, "
            "and its weights came without the filter's statistics (a league pool member "
            "keeps weights only); evaluate a checkpoint of the run (checkpoint://RUN)"
        )
    converter = history_converter(spec, env.observation_space)
    rebuilt = build_module(
        spec,
        observation_space=converter.observation_space if converter else env.observation_space,
        action_space=env.action_space,
        weights=weights,
        inference_only=True,  # acting needs no critic
    )
    make = policy_class or ModulePolicy
    view = spec.env.hidden_view()
    return make(
        label,
        rebuilt,
        sample=sample,
        converter=converter,
        device=device,
        view=view,
        observation_filter=observation_filter,
    )
