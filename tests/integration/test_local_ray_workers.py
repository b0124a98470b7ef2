"""Workers of an embedded local Ray run in the driver's folder with the driver's interpreter.

Under `uv run` (the README's commands) Ray's uv hook would instead start each worker through
`uv run` in a zipped copy of the current folder with an environment built inside it: seconds
more per worker, and relative paths that point into the copy. `import rl_platform` turns the
hook off before Ray is imported (rl_platform/__init__.py); the test session does the same in
tests/conftest.py.
"""

import os
import subprocess
import sys

import ray


@ray.remote(num_cpus=0)
def _where() -> tuple[str, str]:
    return os.getcwd(), sys.executable


def test_session_ray_workers_share_the_drivers_folder_and_interpreter(ray_local):
    assert ray.get(_where.remote()) == (os.getcwd(), sys.executable)


def test_importing_rl_platform_turns_rays_uv_hook_off_before_ray_is_imported():
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_UV_RUN_RUNTIME_ENV"}
    probe = (
        "import rl_platform; from ray._private import ray_constants; "
        "print(ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
