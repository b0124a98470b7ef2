"""`rlp doctor`: what works on this machine and how to fix what does not.

Each check returns a `Check` (ok / warn / fail, what was found, how to fix it). Checks read the
environment they are given, so tests can run them on a fake one. Secrets are never read into
the report: for tokens and API keys only their presence (and file permissions) is shown.
"""

import os
import platform
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from importlib import metadata
from pathlib import Path

PYTHON_RANGE = ((3, 11), (3, 13))
RAY_VERSION = "2.60.0"
MUJOCO_TIMEOUT_S = 120
_RENDER_SNIPPET = (
    "import gymnasium as gym; e = gym.make('InvertedPendulum-v5', render_mode='rgb_array'); "
    "e.reset(seed=0); f = e.render(); print(f.shape)"
)


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def check_python(version: tuple[int, int] | None = None) -> Check:
    major_minor = version or sys.version_info[:2]
    text = f"{major_minor[0]}.{major_minor[1]} ({platform.python_implementation()})"
    low, high = PYTHON_RANGE
    if low <= tuple(major_minor) < high:
        return Check("python", Status.OK, text)
    return Check("python", Status.FAIL, text, "use Python 3.11 or 3.12 (`uv python install 3.11`)")


def check_ray() -> Check:
    version = _version("ray")
    if version is None:
        return Check("ray", Status.FAIL, "not installed", "uv sync (ray[rllib] is a dependency)")
    if version != RAY_VERSION:
        return Check("ray", Status.WARN, version, f"rl_platform is pinned to ray {RAY_VERSION}")
    return Check("ray", Status.OK, version)


def check_torch() -> list[Check]:
    try:
        import torch
    except ImportError:
        return [Check("torch", Status.FAIL, "not installed", "uv sync")]
    checks = [Check("torch", Status.OK, torch.__version__)]
    if torch.cuda.is_available():
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        checks.append(Check("cuda", Status.OK, f"{torch.version.cuda}: {names}"))
    else:
        hint = "CPU-only torch build" if torch.version.cuda is None else "no GPU visible"
        fix = "GPU training needs an NVIDIA driver and CUDA torch; CPU works for small runs"
        checks.append(Check("cuda", Status.WARN, hint, fix))
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        checks.append(Check("mps", Status.OK, "available (RLlib learners use CPU on Macs)"))
    return checks


def check_ale() -> Check:
    try:
        import ale_py.roms as roms
    except ImportError:
        return Check("atari roms", Status.FAIL, "ale-py not installed", "uv sync (ale-py >= 0.9)")
    ids = roms.get_all_rom_ids()
    pong = Path(roms.__file__).parent / "pong.bin"
    rom_dir = os.environ.get("ALE_ROMS_DIR")
    if rom_dir:
        pong = Path(rom_dir) / "pong.bin"
    if pong.is_file():
        return Check("atari roms", Status.OK, f"{len(ids)} known, pong.bin at {pong.parent}")
    return Check(
        "atari roms", Status.FAIL, f"pong.bin missing in {pong.parent}",
        "ale-py >= 0.9 ships the ROMs: reinstall it, or unset ALE_ROMS_DIR",
    )  # fmt: skip


def check_mujoco(environ: Mapping[str, str] | None = None) -> Check:
    """Render one frame in a subprocess: a broken GL setup can abort the interpreter."""
    env = dict(os.environ if environ is None else environ)
    env.setdefault("MUJOCO_GL", "egl")
    if env["MUJOCO_GL"] in ("egl", "osmesa"):
        env.setdefault("PYOPENGL_PLATFORM", env["MUJOCO_GL"])
    backend = env["MUJOCO_GL"]
    try:
        done = subprocess.run(
            [sys.executable, "-c", _RENDER_SNIPPET], env=env, capture_output=True, text=True,
            timeout=MUJOCO_TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return Check("mujoco render", Status.FAIL, f"MUJOCO_GL={backend}: timed out")
    if done.returncode == 0:
        return Check("mujoco render", Status.OK, f"MUJOCO_GL={backend}: {done.stdout.strip()}")
    last = (done.stderr.strip().splitlines() or ["unknown error"])[-1][:160]
    other = "osmesa" if backend == "egl" else "egl"
    return Check(
        "mujoco render", Status.FAIL, f"MUJOCO_GL={backend}: {last}",
        f"install EGL (libegl1) or OSMesa (libosmesa6) and try MUJOCO_GL={other}",
    )  # fmt: skip


def check_wandb(environ: Mapping[str, str], home: Path) -> Check:
    version = _version("wandb")
    if version is None:
        return Check("wandb", Status.WARN, "not installed", "specs need logging.wandb: off")
    mode = environ.get("WANDB_MODE", "online (default)")
    netrc = home / ".netrc"
    has_key = bool(environ.get("WANDB_API_KEY")) or (
        netrc.is_file() and "api.wandb.ai" in netrc.read_text(errors="ignore")
    )
    detail = f"{version}, WANDB_MODE={mode}, API key {'present' if has_key else 'absent'}"
    if mode.startswith("online") and not has_key:
        return Check("wandb", Status.WARN, detail, "`wandb login`, or WANDB_MODE=offline")
    return Check("wandb", Status.OK, detail)


def _token_file_note(path: Path) -> tuple[str, bool]:
    if not path.is_file():
        return f"{path}: absent", False
    loose = path.stat().st_mode & 0o077
    return f"{path}: present{' (readable by others!)' if loose else ''}", bool(loose)


def check_ray_auth(environ: Mapping[str, str], home: Path) -> Check:
    """Ray token auth: mode and where a token would come from (never the token itself)."""
    mode = environ.get("RAY_AUTH_MODE", "") or "unset"
    notes = [
        f"RAY_AUTH_MODE={mode}",
        f"RAY_AUTH_TOKEN {'set' if environ.get('RAY_AUTH_TOKEN') else 'unset'}",
    ]
    path_var = environ.get("RAY_AUTH_TOKEN_PATH")
    token_file = Path(path_var).expanduser() if path_var else home / ".ray" / "auth_token"
    file_note, loose = _token_file_note(token_file)
    notes.append(file_note)
    has_token = bool(environ.get("RAY_AUTH_TOKEN")) or token_file.is_file()
    detail = "; ".join(notes)
    if path_var and not token_file.is_file():
        return Check("ray token auth", Status.FAIL, detail, "RAY_AUTH_TOKEN_PATH names no file")
    if mode == "token" and not has_token:
        return Check(
            "ray token auth", Status.FAIL, detail,
            "write the cluster token to ~/.ray/auth_token (chmod 600) or set RAY_AUTH_TOKEN",
        )  # fmt: skip
    if loose:
        return Check("ray token auth", Status.WARN, detail, f"chmod 600 {token_file}")
    return Check("ray token auth", Status.OK, detail)


def run_checks(
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    skip: frozenset[str] = frozenset(),
) -> list[Check]:
    environ = os.environ if environ is None else environ
    home = Path.home() if home is None else home
    steps: dict[str, Callable[[], list[Check]]] = {
        "python": lambda: [check_python()],
        "ray": lambda: [check_ray()],
        "torch": check_torch,
        "atari": lambda: [check_ale()],
        "mujoco": lambda: [check_mujoco(environ)],
        "wandb": lambda: [check_wandb(environ, home)],
        "auth": lambda: [check_ray_auth(environ, home)],
    }
    return [check for name, step in steps.items() if name not in skip for check in step()]


CHECK_NAMES = ("python", "ray", "torch", "atari", "mujoco", "wandb", "auth")
