"""Search budgets (max_t from `stop`), trial statuses, results.csv and best.yaml (no Ray)."""

import csv
import io

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import SpecError, UserError
from rl_platform.cli import app
from rl_platform.search.budget import TrialBudget, trial_budget, trial_bundles
from rl_platform.search.results import (
    TrialRow,
    best_spec_yaml,
    pick_best,
    results_csv,
    trial_status,
)
from rl_platform.spec import validate_spec_data
from rl_platform.utils.safe_yaml import parse_yaml

PARAMS = {"training.lr": {"loguniform": [1e-4, 1e-3]}}


def _spec(*, stop=None, scheduler=None, **top):
    search = {"params": PARAMS, "scheduler": scheduler or {}}
    data = {"name": "demo", "env": {"id": "CartPole-v1"}, "stop": stop or {"env_steps": 9000}}
    return validate_spec_data({**data, "search": search, **top})


def test_max_t_comes_from_stop_on_the_time_axis_and_grace_from_max_t():
    assert trial_budget(_spec()) == TrialBudget("env_steps", 9000, 1000, 3.0)
    by_iter = _spec(
        stop={"iterations": 40},
        scheduler={"time_attr": "training_iteration", "reduction_factor": 2},
    )
    assert trial_budget(by_iter) == TrialBudget("training_iteration", 40, 10, 2.0)
    by_time = _spec(stop={"minutes": 2}, scheduler={"time_attr": "time_total_s"})
    assert trial_budget(by_time).max_t == 120
    explicit = _spec(scheduler={"max_t": 5000, "grace_period": 500})
    assert (trial_budget(explicit).max_t, trial_budget(explicit).grace_period) == (5000, 500)


def test_missing_max_t_names_both_places_to_set_it():
    spec = _spec(stop={"iterations": 3})
    with pytest.raises(SpecError, match=r"search.scheduler.max_t.*stop.env_steps"):
        trial_budget(spec)


def test_grace_period_larger_than_max_t_is_rejected():
    with pytest.raises(SpecError, match="grace_period"):
        trial_budget(_spec(scheduler={"grace_period": 10_000}))


def test_params_are_checked_against_the_specs_own_algorithm():
    spec = validate_spec_data(
        {
            "name": "demo",
            "algo": "DQN",
            "env": {"id": "CartPole-v1"},
            "stop": {"env_steps": 9000},
            "search": {"params": {"training.num_epochs": {"choice": [2, 4]}}},
        }
    )  # num_epochs exists for PPO, so the block alone validates
    with pytest.raises(SpecError) as info:
        trial_budget(spec)
    assert "search.params.training.num_epochs" in str(info.value) and "DQN" in str(info.value)


def test_model_params_are_checked_against_the_specs_model_type():
    spec = validate_spec_data(
        {
            "name": "demo",
            "env": {"id": "CartPole-v1"},
            "stop": {"env_steps": 9000},
            "search": {
                "params": {
                    "model.lstm_cell_size": {"choice": [64, 128]},
                    "model.hidden": {"choice": [[32], [64]]},
                }
            },
        }
    )  # lstm_cell_size exists for model.type lstm, so the block alone validates
    with pytest.raises(SpecError) as info:
        trial_budget(spec)
    assert "search.params.model.lstm_cell_size" in str(info.value)
    assert "model.hidden" not in str(info.value)  # a field of this spec's (MLP) model


def test_league_and_bc_params_need_the_specs_own_block():
    spec = validate_spec_data(
        {
            "name": "demo",
            "env": {"id": "CartPole-v1"},
            "stop": {"env_steps": 9000},
            "search": {
                "params": {
                    "bc.coef": {"uniform": [0.1, 1.0]},
                    "league.opponent_mix.based": {"uniform": [0.1, 0.5]},
                }
            },
        }
    )  # both are fields of the schema, so the block alone validates
    with pytest.raises(SpecError) as info:
        trial_budget(spec)
    text = str(info.value)
    assert "search.params.bc.coef: the spec has no `bc:` block" in text
    assert "search.params.league.opponent_mix.based: the spec has no `league:` block" in text


def test_a_league_spec_can_be_searched():
    spec = validate_spec_data(
        {
            "name": "duel",
            "env": {"id": "rlp/Duel-v0"},
            "league": {"opponent_mix": {"self_play": 0.5, "based": 0.5}, "scripted": ["based"]},
            "stop": {"env_steps": 9000},
            "search": {"params": {"league.opponent_mix.based": {"uniform": [0.1, 0.9]}}},
        }
    )
    assert trial_budget(spec).max_t == 9000


def test_a_spec_without_search_block_is_a_user_error():
    spec = validate_spec_data({"name": "demo", "env": {"id": "CartPole-v1"}})
    with pytest.raises(UserError, match="no `search:` block"):
        trial_budget(spec)


def test_trial_bundles_reserve_the_remote_actors_a_trial_starts():
    spec = _spec(resources={"env_runners": 2, "cpus_per_env_runner": 0.5})
    spec = validate_spec_data(
        {**spec.dump(), "search": {**spec.dump()["search"], "resources": {"cpu": 1, "gpu": 0.25}}}
    )
    assert trial_bundles(spec) == [{"CPU": 1.0, "GPU": 0.25}, {"CPU": 0.5}, {"CPU": 0.5}]
    assert trial_bundles(_spec()) == [{"CPU": 1.0}]


def test_trial_bundles_reserve_the_custom_resources_that_place_the_actors():
    # Tune captures the trial's actors into its placement group: a bundle without
    # `rlp_env_runner` could never hold an env runner that asks for it.
    placed = {
        "env_runners": 1,
        "learners": 1,
        "gpus_per_learner": 1,
        "custom_resources_per_env_runner": {"rlp_env_runner": 1},
        "custom_resources_per_learner": {"rlp_learner": 1},
    }
    assert trial_bundles(_spec(resources=placed))[1:] == [
        {"CPU": 1.0, "rlp_env_runner": 1.0},
        {"CPU": 1.0, "GPU": 1.0, "rlp_learner": 1.0},
    ]


# What a learner asks for (`ResourcesSpec.learner_gpu_request`) is what its trial reserves: with
# `device: cuda, gpus_per_learner: 0` the learner asks for 1 GPU, so a trial that reserved none
# would hold a remote learner that never starts or a local one that Tune shows no GPU.
GPU_RULE_CASES = [
    # (resources, the driver's bundle, the remote learner's bundle or None)
    ({"device": "cuda", "gpus_per_learner": 0, "learners": 0}, {"CPU": 1.0, "GPU": 1.0}, None),
    (
        {"device": "cuda", "gpus_per_learner": 0, "learners": 1},
        {"CPU": 1.0},
        {"CPU": 1.0, "GPU": 1.0},
    ),
    (
        {"device": "cuda", "gpus_per_learner": 0.5, "learners": 1},
        {"CPU": 1.0},
        {"CPU": 1.0, "GPU": 0.5},
    ),
    ({"device": "cpu", "gpus_per_learner": 1, "learners": 1}, {"CPU": 1.0}, {"CPU": 1.0}),
    ({"device": "cpu", "gpus_per_learner": 1, "learners": 0}, {"CPU": 1.0}, None),
    ({"device": "auto", "gpus_per_learner": 0.5, "learners": 0}, {"CPU": 1.0, "GPU": 0.5}, None),
    ({"device": "auto", "gpus_per_learner": 0, "learners": 1}, {"CPU": 1.0}, {"CPU": 1.0}),
]


@pytest.mark.parametrize(("resources", "driver", "learner"), GPU_RULE_CASES)
def test_a_trial_reserves_the_gpus_its_learner_asks_for(resources, driver, learner):
    expected = [driver] if learner is None else [driver, learner]
    assert trial_bundles(_spec(resources=resources)) == expected


def test_a_trials_own_gpu_is_kept_when_its_local_learner_asks_for_less():
    spec = _spec(resources={"device": "auto", "gpus_per_learner": 0})
    spec = validate_spec_data(
        {**spec.dump(), "search": {**spec.dump()["search"], "resources": {"gpu": 0.25}}}
    )
    assert trial_bundles(spec) == [{"CPU": 1.0, "GPU": 0.25}]


BUDGET = TrialBudget("env_steps", 3000, 333, 3.0)


@pytest.mark.parametrize(
    ("tune_status", "result", "expected"),
    [
        ("TERMINATED", {"env_steps": 3006, "stop_reason": ""}, "completed"),
        ("TERMINATED", {"env_steps": 1002, "stop_reason": ""}, "early_stopped"),
        ("TERMINATED", {"env_steps": 1500, "stop_reason": "return_mean >= 450"}, "completed"),
        (
            "TERMINATED",
            {"env_steps": 500, "trial_status": "collapsed", "stop_reason": "x"},
            "collapsed",
        ),
        ("TERMINATED", {"env_steps": 500, "trial_status": "nan", "stop_reason": "x"}, "nan"),
        ("ERROR", {"env_steps": 500}, "error"),
        ("RUNNING", {"env_steps": 500, "trial_status": "ok"}, "running"),
        ("PENDING", {}, "pending"),
    ],
)
def test_trial_status(tune_status, result, expected):
    assert trial_status(tune_status=tune_status, result=result, budget=BUDGET) == expected


def _row(trial_id, status, metric, lr=1e-3):
    return TrialRow(
        trial_id=trial_id,
        status=status,
        params={"training.lr": lr},
        metric=metric,
        env_steps=3000 if status == "completed" else 1000,
        iterations=3,
    )


def test_best_prefers_full_budget_trials_and_skips_unhealthy_ones():
    rows = [
        _row("a", "early_stopped", 300.0),
        _row("b", "completed", 120.0),
        _row("c", "completed", 150.0),
        _row("d", "collapsed", 500.0),
        _row("e", "nan", None),
    ]
    assert pick_best(rows, mode="max").trial_id == "c"
    assert pick_best(rows, mode="min").trial_id == "b"
    assert pick_best([_row("a", "early_stopped", 3.0)], mode="max").trial_id == "a"
    assert pick_best([_row("d", "collapsed", 500.0), _row("e", "error", None)], mode="max") is None


def test_results_csv_has_one_row_per_trial_with_sampled_values():
    text = results_csv(
        [_row("a", "completed", 150.0, lr=5e-4), _row("b", "error", None)],
        param_paths=["training.lr"],
        metric="train/episode_return_mean",
    )
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == [
        "trial_id",
        "status",
        "training.lr",
        "train/episode_return_mean",
        "env_steps",
        "iterations",
    ]
    assert rows[0]["training.lr"] == "0.0005" and rows[0]["train/episode_return_mean"] == "150"
    assert rows[1]["status"] == "error" and rows[1]["train/episode_return_mean"] == ""


def test_best_yaml_is_a_complete_spec_without_search_block():
    spec = _spec()
    text = best_spec_yaml(spec.dump(), _row("c", "completed", 150.0, lr=5e-4))
    assert text.startswith("# best trial c: training.lr=0.0005")
    data = parse_yaml(text)
    assert "search" not in data
    best = validate_spec_data(data)
    assert best.training.lr == 5e-4 and best.search is None and best.stop == spec.stop


def test_rlp_search_reports_spec_problems_with_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: demo\nenv: {id: CartPole-v1}\nstop: {env_steps: 900}\n"
        "search: {params: {training.lrr: {uniform: [0.1, 0.2]}}}\n"
    )
    result = CliRunner().invoke(app, ["search", str(bad)])
    assert result.exit_code == 2
    assert "did you mean 'training.lr'" in result.output
    both = CliRunner().invoke(app, ["search", str(bad), "--resume", str(tmp_path)])
    assert both.exit_code == 2 and "--resume DIR" in both.output
    not_a_search = CliRunner().invoke(app, ["search", "--resume", str(tmp_path)])
    assert not_a_search.exit_code == 2 and "not a search folder" in not_a_search.output


def test_live_table_shows_trial_status_sampled_values_and_metric():
    from rich.console import Console

    from rl_platform.commands.trial_table import render_table

    rows = [_row("a", "completed", 150.0, lr=5e-4), _row("b", "early_stopped", None)]
    table = render_table(rows, param_paths=["training.lr"], metric="train/episode_return_mean")
    console = Console(width=200, record=True)
    console.print(table)
    text = console.export_text()
    assert "lr" in text and "episode_return_mean" in text
    assert "completed" in text and "early_stopped" in text and "0.0005" in text and "150" in text


def test_table_headers_are_short_unless_ambiguous():
    from rl_platform.commands.trial_table import short_names

    assert short_names(["training.lr", "model.hidden"]) == {
        "training.lr": "lr",
        "model.hidden": "hidden",
    }
    assert short_names(["training.lr", "model.settings.lr"]) == {
        "training.lr": "training.lr",
        "model.settings.lr": "model.settings.lr",
    }
