"""Per-module metrics of a short duel league run, on both env runners: the trained module's own
return, the other modules' returns apart, main's own reward components, and action fractions
named by the duel's actions that sum to 1."""

import json
import math

import pytest

from rl_platform import train
from rl_platform.envs.duel.actions import ACTION_NAMES
from rl_platform.spec import load_spec
from rl_platform.spec.mix_schedule import MixPhase
from rl_platform.spec.sections import StopSpec
from tests.conftest import EXPERIMENTS
from tests.integration.test_league_callback import TINY


@pytest.mark.parametrize("runner", ["rllib", "vector"])
def test_a_league_run_reports_each_modules_own_metrics(runner, ray_local, tmp_path):
    spec = load_spec(
        EXPERIMENTS / "duel_vs_based.yaml",
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


def test_an_opponent_mix_schedule_switches_by_env_steps_and_resumes_in_its_phase(
    ray_local, tmp_path
):
    spec = load_spec(EXPERIMENTS / "duel_vs_based.yaml", overrides=[*TINY, "stop.iterations=2"])
    schedule = [
        MixPhase(from_env_steps=0, mix={"based": 1.0}),
        MixPhase(from_env_steps=600, mix={"constant": 1.0}),  # after iteration 2 (300 each)
    ]
    league = spec.league.model_copy(update={"opponent_mix": schedule})
    spec = spec.model_copy(update={"league": league})
    first = train(spec, out_dir=tmp_path)
    resumed = train(spec.model_copy(update={"stop": StopSpec(iterations=3)}), resume=first.run_dir)
    rows = [json.loads(line) for line in (first.run_dir / "metrics.jsonl").read_text().splitlines()]
    # `league/mix/...` is the mix planned for the next iteration.
    assert [(r["league/mix/based"], r["league/mix/constant"]) for r in rows] == [
        (1.0, 0.0),
        (0.0, 1.0),
        (0.0, 1.0),
    ]
    assert resumed.iterations == 3
    assert rows[-1]["league/games/constant"] > 0 and "league/games/based" not in rows[-1]
    # A window's score is wins plus half the draws; its draw share comes with it.
    assert 0.0 <= rows[-1]["league/draw_rate/constant"] <= 1.0
    assert rows[-1]["league/draw_rate/constant"] / 2 <= rows[-1]["league/win_rate/constant"]
