"""Which env an evaluation runs (`--env ID|ALIAS|SPEC.yaml`) and one uniform way to step it.

`AgentEnv` gives single-agent gymnasium envs and RLlib MultiAgentEnvs the same per-agent dict
interface, so one rollout loop serves CartPole, Atari, MuJoCo, the duel and connect four.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.envs.env_info import SINGLE_AGENT_ID, check_env, env_facts
from rl_platform.envs.sources import EnvIdError
from rl_platform.policies.exported import exported_env
from rl_platform.spec.policy_uri import PolicyKind, PolicyURI
from rl_platform.teachers import ENV_IDS

_SPEC_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class EnvTarget:
    env_id: str
    wrappers: tuple[str, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def multi_agent(self) -> bool:
        return env_facts(self.env_id, self.kwargs).multi_agent


def _run_spec_env(uri: PolicyURI) -> EnvTarget | None:
    """The env a checkpoint/league/exported policy was trained on (None for other policies)."""
    if uri.kind == PolicyKind.POLICY:
        env_id, wrappers, kwargs = exported_env(Path(str(uri.path)).expanduser(), label=uri.text)
        return EnvTarget(env_id, wrappers, kwargs)
    if uri.kind not in (PolicyKind.CHECKPOINT, PolicyKind.LEAGUE) or uri.path is None:
        return None
    from rl_platform.policies.rebuild import run_dir_of
    from rl_platform.storage.saved_spec import read_saved_spec

    path = Path(uri.path).expanduser()
    if not path.exists():
        raise UserError(f"{uri.text}: {path} does not exist")
    spec = read_saved_spec(run_dir_of(path))
    return EnvTarget(spec.env.id, tuple(spec.env.wrappers), dict(spec.env.kwargs))


def resolve_env(env: str | None, *, policies: list[PolicyURI]) -> EnvTarget:
    """`--env` as a spec file, an alias (`duel`), an env id, or the first learned policy's env.

    An env id equal to a learned policy's training env reuses that run's wrappers and kwargs,
    so an Atari checkpoint sees the same preprocessing it was trained with.
    """
    if env is not None and env.endswith(_SPEC_SUFFIXES):
        from rl_platform.spec import load_spec

        spec = load_spec(Path(env))
        return EnvTarget(spec.env.id, tuple(spec.env.wrappers), dict(spec.env.kwargs))
    trained = next((t for t in map(_run_spec_env, policies) if t is not None), None)
    if env is None:
        if trained is None:
            raise UserError("--env is required (an env id such as CartPole-v1, or a spec file)")
        return trained
    env_id = ENV_IDS.get(env, env)
    try:
        check_env(env_id)
    except EnvIdError as err:
        raise UserError(f"--env {env!r}: {err}") from None
    if trained is not None and trained.env_id == env_id:
        return trained
    return EnvTarget(env_id)


def _headless_rendering() -> None:
    # pygame (classic control) would probe sound devices and log ALSA errors on servers.
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    # `pygame.init()` also starts a video driver; without a desktop session SDL's probe prints
    # "XDG_RUNTIME_DIR is invalid or not set". rgb_array and ansi frames need no window.
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    # MuJoCo picks its GL backend at import; EGL renders headless with or without a GPU.
    os.environ.setdefault("MUJOCO_GL", "egl")
    if os.environ["MUJOCO_GL"] in ("egl", "osmesa"):
        os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])


def _cannot_render(env_id: str, render_mode: str, detail: str) -> UserError:
    what = "text (ansi)" if render_mode == "ansi" else repr(render_mode)
    return UserError(f"{env_id} does not render {what}: {detail}")


class AgentEnv:
    """Per-agent dict view of one env: `reset(seed) -> obs`, `step(actions) -> ...`."""

    def __init__(self, target: EnvTarget, *, render_mode: str | None = None) -> None:
        from rl_platform.env_adapters.registry import make_env

        kwargs = dict(target.kwargs)
        if render_mode is not None:
            _headless_rendering()
            kwargs["render_mode"] = render_mode
        try:
            self.env = make_env(target.env_id, list(target.wrappers), kwargs)
        except (TypeError, ValueError, AssertionError) as exc:
            # Envs reject unknown render modes in all three ways.
            if render_mode is None:
                raise
            raise _cannot_render(target.env_id, render_mode, str(exc)) from None
        self.target = target
        modes = (getattr(self.env, "metadata", None) or {}).get("render_modes")
        if render_mode is not None and modes and render_mode not in modes:
            # Gymnasium only complains at reset(); RLlib envs list no modes (so no check).
            raise _cannot_render(target.env_id, render_mode, f"it renders {list(modes)}")
        self.multi_agent = target.multi_agent
        # Sorted: RLlib's PettingZooEnv keeps its agents in a set (order varies per process).
        agents = sorted(self.env.possible_agents) if self.multi_agent else [SINGLE_AGENT_ID]
        self.agent_ids: list[str] = agents
        # Policies stack rows by these shapes: an env whose observations disagree with its
        # own space is named here, not as a crash inside a policy (`check_observations`).
        self._shapes = {a: getattr(self.spaces(a)[0], "shape", None) for a in agents}
        self._steps = 0

    def spaces(self, agent_id: str) -> tuple[gym.Space, gym.Space]:
        if not self.multi_agent:
            return self.env.observation_space, self.env.action_space
        return self.env.get_observation_space(agent_id), self.env.get_action_space(agent_id)

    def reset(self, *, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        self._steps = 0
        obs, info = self.env.reset(seed=seed)
        if not self.multi_agent:
            obs, info = {SINGLE_AGENT_ID: obs}, {SINGLE_AGENT_ID: info}
        self.check_observations(obs, call="reset")
        return obs, info

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, bool, dict]:
        """(obs of agents to act next, rewards, episode over, infos)."""
        self._steps += 1
        if self.multi_agent:
            obs, rewards, terminateds, truncateds, infos = self.env.step(actions)
            done = bool(terminateds.get("__all__")) or bool(truncateds.get("__all__"))
        else:
            agent = SINGLE_AGENT_ID
            ob, reward, terminated, truncated, info = self.env.step(actions[agent])
            obs, rewards, infos = {agent: ob}, {agent: float(reward)}, {agent: info}
            done = terminated or truncated
        self.check_observations(obs, call=f"step {self._steps}")
        return obs, rewards, done, infos

    def check_observations(self, obs: dict[str, Any], *, call: str) -> None:
        """Each agent's observation has its space's shape (spaces without one: not checked)."""
        for agent, value in obs.items():
            expected = self._shapes.get(agent)
            if expected is None or isinstance(value, dict):
                continue
            actual = np.shape(value)
            if actual != expected:
                raise UserError(
                    f"env {self.target.env_id}: {call} returned an observation of shape "
                    f"{actual} for agent {agent!r}, but its observation_space has shape "
                    f"{expected}; make the env's observations match its observation_space"
                )

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


@dataclass(frozen=True)
class EnvShape:
    """Agent ids and per-agent spaces of an env, probed once before policies are loaded."""

    agent_ids: list[str]
    spaces: dict[str, tuple[gym.Space, gym.Space]]

    @property
    def two_player(self) -> bool:
        return len(self.agent_ids) == 2


def env_shape(spaces: dict[str, tuple[gym.Space, gym.Space]]) -> EnvShape:
    """The shape of an env whose per-agent spaces are known (a run's `RunFacts`)."""
    return EnvShape(list(spaces), dict(spaces))


def probe_env(target: EnvTarget) -> EnvShape:
    from rl_platform.env_adapters.registry import agent_spaces

    spaces = agent_spaces(
        target.env_id, target.wrappers, target.kwargs, multi_agent=target.multi_agent
    )
    return env_shape(spaces)
