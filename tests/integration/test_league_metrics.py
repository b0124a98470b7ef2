"""Per-module metrics of a short duel league run, on both env runners: the trained module's own
return, the other modules' returns apart, main's own reward components, and action fractions
named by the duel's actions that sum to 1."""

import json
import math

import pytest

from rl_platform import train
from rl_platform.envs.duel.actions import ACTION_NAMES
from rl_platform.spec import load_spec
from tests.conftest import EXPERIMENTS
from tests.integration.test_league_callback import TINY


@pytest.mark.parametrize("runner", ["rllib", "vector"])
def test_a_league_run_reports_each_modules_own_metrics(runner, ray_local, tmp_path):
    spec = load_spec(
        EXPERIMENTS / "duel_selfplay.yaml",
        overrides=[*TINY, f"env.runner={runner}", "stop.iterations=2"],
    )
    result = train(spec, out_dir=tmp_path)
    rows = [
        json.loads(line) for line in (result.run_dir / "metrics.jsonl").read_text().splitlines()
    ]
    last = rows[-1]

    assert math.isfinite(last["train/episode_return_mean"])
    others = {k for k in last if k.startswith("league/return_mean/")}
    assert others, sorted(last)
    assert "league/return_mean/main" not in others
    assert all(k.removeprefix("league/return_mean/") != "main" for k in others)

    fractions = {k: v for k, v in last.items() if k.startswith("actions/")}
    assert set(fractions) == {f"actions/{name}_frac" for name in ACTION_NAMES}
    assert math.isclose(sum(fractions.values()), 1.0, abs_tol=1e-9)

    components = {k for k in last if k.startswith("reward/")}
    assert {"reward/damage_dealt", "reward/damage_taken", "reward/time_penalty"} <= components
    # Main's own seat: -1 per frame it played (both seats summed would be -2 per frame).
    assert last["reward/time_penalty"] == pytest.approx(-last["train/episode_len_mean"], rel=0.05)
