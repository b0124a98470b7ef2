"""Side-by-side measurement scripts; their results go to docs/BENCHMARKS.md.

Run each as a module from the repository root, `uv run python -m benchmarks.NAME [ARGS]`: the
folder is a package, so the scripts share `benchmarks.common` without path tricks. A script
that measures rl_platform goes through its public entry points (`rl_platform.train`, `rlp
train`, `rlp eval`'s arena games, `rl_platform.policies`); the yardsticks it is measured
against (`plain_torch_ppo`, `plain_torch_recipe`, `rllib_cartpole_example`) stay outside it
on purpose.
"""
