"""benchmarks/stock_rllib_overhead.py: its arguments and its ratio arithmetic (no timing)."""

import ast

import pytest

from benchmarks.stock_rllib_overhead import parse_args, ratios
from tests.conftest import REPO_ROOT


def test_defaults_and_limits():
    args = parse_args([])
    assert (args.env_steps, args.rounds, args.seed) == (50_000, 2, 0)
    assert parse_args(["--env-steps", "100000", "--rounds", "3"]).rounds == 3
    for bad in (["--env-steps", "100"], ["--rounds", "0"]):
        with pytest.raises(SystemExit):
            parse_args(bad)


def test_ratio_is_ours_over_stock_per_round():
    rounds = [
        {"rl_platform": {"env_steps_per_s": 600.0}, "stock": {"env_steps_per_s": 500.0}},
        {"rl_platform": {"env_steps_per_s": 450.0}, "stock": {"env_steps_per_s": 500.0}},
        {"rl_platform": {"env_steps_per_s": 500.0}, "stock": {"env_steps_per_s": 500.0}},
    ]
    assert ratios(rounds) == {"median": 1.0, "min": 0.9, "max": 1.2, "rounds": [1.2, 0.9, 1.0]}


def test_the_stock_arm_imports_no_rl_platform():
    tree = ast.parse((REPO_ROOT / "benchmarks" / "stock_rllib_hopper_ppo.py").read_text())
    imported = [
        alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names
    ]
    imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imported and not [
        name for name in imported if name.startswith(("rl_platform", "benchmarks"))
    ]
