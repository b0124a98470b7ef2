"""`rlp watch`: render a policy's episodes to a GIF / MP4, or as text frames (the duel).

Seating follows `rlp eval` (two-player games: the policy plays `player_0` vs `opponent`).
Frames come from the env's own renderer (`rgb_array`; `ansi` for text). MuJoCo renders
headless through EGL (`MUJOCO_GL=egl`, set unless already given; `osmesa` is the fallback).
"""

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rl_platform.base.errors import UserError
from rl_platform.evaluation.envs import AgentEnv, EnvTarget, probe_env, resolve_env
from rl_platform.evaluation.eval import check_episodes, seat_policies
from rl_platform.evaluation.rollout import EpisodeRecord, Rollout, RolloutHooks
from rl_platform.evaluation.video import FrameWriter, VideoInfo, open_writer, upscale
from rl_platform.policies import parse_policy_uri

# Frames narrower than this are upscaled by an integer factor (the duel renders 256 px wide).
MIN_WIDTH = 480
DEFAULT_FPS = 30.0
ENV_FPS = {"rlp/Duel-v0": 20.0}


@dataclass
class _Frames:
    """Frame sink state shared by the rollout hook."""

    writer: FrameWriter | None
    on_text: Callable[[str, float], None] | None
    """Gets each text frame and the frame rate (the CLI paces the terminal with it)."""
    fps: float
    max_frames: int
    scale: int | None
    count: int = 0
    episodes: list[dict[str, Any]] = field(default_factory=list)


def frame_rate_for(target: EnvTarget, fps: float | None) -> float:
    """`--fps`, else the env's own render rate (real time), else 30."""
    if fps is not None:
        if fps <= 0:
            raise UserError(f"--fps must be > 0, got {fps}")
        return fps
    if target.env_id in ENV_FPS:
        return ENV_FPS[target.env_id]
    env = AgentEnv(target)
    try:
        metadata = getattr(env.env, "metadata", None) or {}
    finally:
        env.close()
    return float(metadata.get("render_fps") or DEFAULT_FPS)


def _scale_for(width: int, scale: int | None) -> int:
    if scale is not None:
        if scale < 1:
            raise UserError(f"--scale must be >= 1, got {scale}")
        return scale
    return max(1, math.ceil(MIN_WIDTH / width))


def _sink(frames: _Frames, rollout: Rollout) -> Callable[[AgentEnv, EpisodeRecord], None]:
    def on_frame(env: AgentEnv, record: EpisodeRecord) -> None:
        if frames.count >= frames.max_frames:
            return  # the step that follows the stop request renders nothing
        rendered = env.render()
        if frames.on_text is not None:
            if not isinstance(rendered, str):
                raise UserError(f"--text: {env.target.env_id} does not render text (try --out)")
            frames.on_text(rendered, frames.fps)
        elif frames.writer is not None:
            if rendered is None or isinstance(rendered, str):
                raise UserError(f"{env.target.env_id} rendered no rgb_array frame")
            frames.scale = _scale_for(rendered.shape[1], frames.scale)
            frames.writer.add(upscale(rendered, frames.scale))
        frames.count += 1
        if frames.count >= frames.max_frames:
            rollout.stop_requested = True

    return on_frame


def watch(
    *,
    policy: str,
    env: str | None,
    episodes: int = 1,
    seed: int = 0,
    out: Path | None = None,
    on_text: Callable[[str, float], None] | None = None,
    fps: float | None = None,
    max_steps: int | None = None,
    max_frames: int = 3000,
    scale: int | None = None,
    opponent: str | None = None,
    sample: bool = False,
) -> dict[str, Any]:
    """Render episodes; returns a JSON-ready summary (frames, size, per-episode returns)."""
    check_episodes(episodes)
    if (out is None) == (on_text is None):
        raise UserError("pass exactly one of --out FILE.gif|FILE.mp4 or --text")
    uri = parse_policy_uri(policy)
    opponent_uri = parse_policy_uri(opponent) if opponent else None
    target = resolve_env(env, policies=[u for u in (uri, opponent_uri) if u is not None])
    shape = probe_env(target)
    seats, policies = seat_policies(uri, opponent_uri, target, shape, sample)
    render_mode = "ansi" if on_text is not None else "rgb_array"
    envs: list[AgentEnv] = []

    def make_env() -> AgentEnv:
        envs.append(AgentEnv(target, render_mode=render_mode))
        return envs[-1]

    rollout = Rollout(
        make_env=make_env, policies=policies, seats=lambda _i: seats, seed=seed, parallel=1,
        max_steps=max_steps,
    )  # fmt: skip
    rate = frame_rate_for(target, fps)
    frames = _Frames(writer=None, on_text=on_text, fps=rate, max_frames=max_frames, scale=scale)
    if out is not None:
        frames.writer = open_writer(out, fps=rate)
    rollout.hooks = RolloutHooks(
        on_frame=_sink(frames, rollout),
        on_episode=lambda r: frames.episodes.append(_episode_row(r)),
    )
    rollout.run(episodes)
    video: VideoInfo | None = frames.writer.close() if frames.writer is not None else None
    return {
        "policy": uri.text,
        "env": target.env_id,
        "frames": frames.count,
        "fps": rate,
        "stopped_at_max_frames": frames.count >= max_frames,
        "episodes": frames.episodes,
        "video": None if video is None else {**asdict(video), "path": str(video.path)},
    }


def _episode_row(record: EpisodeRecord) -> dict[str, Any]:
    return {
        "index": record.index,
        "length": record.length,
        "returns": record.returns,
        "outcomes": record.outcomes,
    }
