"""Train CartPole through the Python API instead of the `rlp` CLI.

Locally:
    uv run python experiments/cartpole_python_api.py
    RLP_PROFILE=smoke uv run python experiments/cartpole_python_api.py

As a Ray job (the working folder is uploaded; local env vars do not travel with the job, so
the profile goes in the runtime env):
    ray job submit --working-dir . \\
        --runtime-env-json '{"env_vars": {"RLP_PROFILE": "smoke"}}' \\
        -- python experiments/cartpole_python_api.py

RLP_PROFILE picks a spec profile (e.g. `smoke`: two iterations); RLP_OUT sets the parent folder
of the run folder (default `runs`).
"""

import os
from pathlib import Path

from rich.console import Console

from rl_platform import load_spec, train

SPEC = Path(__file__).with_name("cartpole_ppo.yaml")


def main() -> None:
    profile = os.environ.get("RLP_PROFILE") or None
    spec = load_spec(SPEC, overrides=[], profile=profile)
    result = train(spec, out_dir=os.environ.get("RLP_OUT", "runs"))
    console = Console()
    console.print(f"run folder: {result.run_dir}", highlight=False)
    console.print(
        f"{result.iterations} iterations, {result.env_steps} env steps, "
        f"stopped: {result.stop_reason}, last checkpoint: {result.last_checkpoint}",
        highlight=False,
    )


if __name__ == "__main__":
    main()
