"""`rlp train --seeds`: what the option means, the across-seed statistics against numbers worked
out by hand, the aggregate written to the experiment folder, its error lines, and what each
seed's trial reserves (Ray imported, never started)."""

import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from loguru import logger
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.evaluation.plot import Curve, aggregate
from rl_platform.multi_seed import tuner as multi_seed_tuner
from rl_platform.multi_seed.selection import parse_seeds
from rl_platform.multi_seed.summary import final_values, seeds_summary, summary_line
from rl_platform.multi_seed.tuner import seed_bundles, seed_trainable
from rl_platform.spec import validate_spec_data
from rl_platform.utils import console_log
from rl_platform.utils.stats import seed_stats
from tests.conftest import EXPERIMENTS

RETURN = "train/episode_return_mean"


def test_a_count_starts_at_the_specs_seed_and_a_list_is_taken_as_written():
    assert parse_seeds("3").resolve(spec_seed=0) == [0, 1, 2]
    assert parse_seeds("3").resolve(spec_seed=5) == [5, 6, 7]
    assert parse_seeds("2").resolve(spec_seed=None) == [0, 1]  # a random-seed spec
    assert parse_seeds("7, 0,4").resolve(spec_seed=5) == [7, 0, 4]


@pytest.mark.parametrize(
    "text, says",
    [
        ("abc", "'abc' is not a whole number"),
        ("", "'' is not a whole number"),
        ("0,,1", "'' is not a whole number"),
        ("1.5", "is not a whole number"),
        ("-1,2", "seeds are >= 0"),
        ("1", "a count of 2 to 100"),
        ("0", "a count of 2 to 100"),
        ("101", "a count of 2 to 100"),
        ("3,3,4", "seed(s) [3] listed twice"),
        ("3,", "'' is not a whole number"),
    ],
)
def test_bad_seeds_are_refused_naming_the_option(text, says):
    with pytest.raises(UserError, match="--seeds") as caught:
        parse_seeds(text)
    assert says in str(caught.value)


def test_mean_iqm_and_interval_against_hand_computed_values():
    stats = seed_stats([4.0, 1.0, 100.0, 3.0, 2.0])
    assert stats.mean == pytest.approx(22.0)  # (1 + 2 + 3 + 4 + 100) / 5
    # IQM: 25% of 5 runs is 1.25, so one whole run is trimmed from each end: (2 + 3 + 4) / 3.
    assert stats.iqm == pytest.approx(3.0)
    low, high = stats.ci95
    assert low <= stats.mean <= high
    # The interval lies inside the data's range and is wide where one seed is far off.
    assert 1.0 <= low < 3.0 and 40.0 < high <= 100.0
    assert seed_stats([4.0, 1.0, 100.0, 3.0, 2.0]).ci95 == stats.ci95  # fixed resampling seed
    eight = seed_stats([8, 1, 7, 2, 6, 3, 5, 4])
    assert (eight.mean, eight.iqm) == (pytest.approx(4.5), pytest.approx(4.5))  # (3+4+5+6)/4
    skewed = seed_stats([0, 0, 10, 10, 10, 10, 10, 1000])
    assert skewed.iqm == pytest.approx(10.0) and skewed.mean == pytest.approx(131.25)


def test_interval_edge_cases():
    assert seed_stats([5.0, 5.0, 5.0]).ci95 == (5.0, 5.0)
    # Two seeds: the resampled means are a, (a+b)/2 or b, so the 95% interval spans [a, b].
    assert seed_stats([2.0, 6.0]).ci95 == (2.0, 6.0)
    one = seed_stats([7.0])
    assert (one.n, one.mean, one.iqm, one.ci95) == (1, 7.0, 7.0, None)


def test_final_values_are_the_last_finite_value_of_each_aggregated_metric():
    rows = [
        {"iteration": 1, RETURN: math.nan, "train/entropy": 0.6},
        {"iteration": 2, RETURN: 20.0, "eval/greedy/return_mean": 30.0, "perf/eval_s": 1.0},
        {"iteration": 3, RETURN: 25.0},
        {"iteration": 4, RETURN: math.inf},
    ]
    assert final_values(rows) == {RETURN: 25.0, "eval/greedy/return_mean": 30.0}


def test_summary_aggregates_each_metric_over_the_seeds_that_have_it():
    finals = {
        0: {RETURN: 10.0, "eval/greedy/return_mean": 12.0},
        1: {RETURN: 20.0},
        2: {RETURN: 30.0, "eval/greedy/return_mean": 16.0},
    }
    summary = seeds_summary(finals, failed={3: "TrainingHealthError: iteration 2: NaN"})
    assert summary["seeds"] == [0, 1, 2, 3]
    assert summary["runs"] == {"0": "seed_0", "1": "seed_1", "2": "seed_2", "3": "seed_3"}
    assert list(summary["metrics"]) == [RETURN, "eval/greedy/return_mean"]  # the return first
    ret = summary["metrics"][RETURN]
    assert (ret["n"], ret["mean"], ret["iqm"], ret["values"]) == (3, 20.0, 20.0, [10, 20, 30])
    assert ret["ci95"][0] <= 20.0 <= ret["ci95"][1]
    evaluated = summary["metrics"]["eval/greedy/return_mean"]
    assert (evaluated["n"], evaluated["mean"], evaluated["ci95"]) == (2, 14.0, [12.0, 16.0])
    line = summary_line(summary)
    assert line.startswith(f"{RETURN} mean:20 iqm:20 ci95:[")
    assert "eval/greedy/return_mean mean:14 iqm:14 ci95:[12, 16] n:2" in line
    assert line.endswith("failed seeds: 3")


def test_plot_ci_band_holds_the_mean_at_every_point():
    curves = [
        Curve(run_dir=Path(f"seed_{i}"), x=np.array([0.0, 100.0]), y=np.array([0.0, 10.0 * i]))
        for i in range(1, 4)
    ]
    _, mean, low, high = aggregate(curves, "ci")
    assert np.allclose(mean[-1], 20.0) and np.all(low <= mean) and np.all(mean <= high)
    assert low[-1] >= 10.0 and high[-1] <= 30.0 and high[-1] > low[-1]


@pytest.mark.parametrize(
    "args, says",
    [
        (["--seeds", "two"], "--seeds 'two': 'two' is not a whole number"),
        (["--seeds", "0,0"], "--seeds '0,0': seed(s) [0] listed twice"),
        (["--seeds", "3", "--resume", "runs/x"], "--seeds starts a new experiment"),
    ],
)
def test_train_refuses_bad_seeds_in_one_line_before_ray(args, says):
    result = CliRunner().invoke(app, ["train", str(EXPERIMENTS / "cartpole_ppo.yaml"), *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert says in " ".join(result.output.split())
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "resources, bundles",
    [
        ({"device": "cuda", "gpus_per_learner": 0, "learners": 0}, [{"CPU": 1.0, "GPU": 1.0}]),
        (
            {"device": "cuda", "gpus_per_learner": 0, "learners": 1},
            [{"CPU": 1.0}, {"CPU": 1.0, "GPU": 1.0}],
        ),
        ({"device": "cpu", "gpus_per_learner": 1, "learners": 1}, [{"CPU": 1.0}, {"CPU": 1.0}]),
        ({"device": "auto", "gpus_per_learner": 0.5, "learners": 0}, [{"CPU": 1.0, "GPU": 0.5}]),
    ],
)
def test_a_seed_reserves_the_gpus_its_learner_asks_for(resources, bundles):
    # `device: cuda, gpus_per_learner: 0`: the learner asks for 1 GPU, so the seed's trial must
    # hold one (ResourcesSpec.learner_gpu_request, the rule search trials follow too).
    spec = validate_spec_data(
        {"name": "demo", "env": {"id": "CartPole-v1"}, "resources": resources}
    )
    assert seed_bundles(spec) == bundles


@pytest.fixture
def console_sink_restored():
    """No console sink before (a fresh worker's is loguru's default, which `seed_trainable`
    replaces); loguru's default one (to stderr as it is at each record) comes back afterwards."""
    logger.remove()
    yield
    logger.remove()
    console_log._console.update(handler=None, verbose=False, label="")
    logger.add(console_log._to_stderr, level="DEBUG")


def test_a_seeds_trial_logs_its_lines_labelled_with_its_seed(
    console_sink_restored, monkeypatch, capsys, tmp_path
):
    def fake_train(spec, run_dir, *, run_key):
        logger.info("demo | iter 1 | env steps 4,011")
        return SimpleNamespace(history=[{RETURN: 21.6}])

    reported = []
    monkeypatch.setattr(multi_seed_tuner, "train_in_folder", fake_train)
    monkeypatch.setattr(multi_seed_tuner.tune, "report", reported.append)
    spec_data = validate_spec_data({"name": "demo", "env": {"id": "CartPole-v1"}}).dump()
    seed_trainable({"seed": 3}, spec_data=spec_data, parent=str(tmp_path), parent_key="k")
    err = capsys.readouterr().err
    assert re.fullmatch(r"\d\d:\d\d:\d\d seed 3 \| demo \| iter 1 \| env steps 4,011\n", err), err
    assert reported == [{"final": {RETURN: 21.6}}]
