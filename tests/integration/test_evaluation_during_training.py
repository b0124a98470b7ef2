"""`evaluation:` evaluates the trained policy while training: `eval/...` metrics in the
iterations that evaluate, `evaluation.jsonl`, the best checkpoint kept as `best` (loadable as
`checkpoint://RUN/best`), and `stop.eval`."""

import json

from typer.testing import CliRunner

from rl_platform import load_spec, train
from rl_platform.cli import app
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from tests.conftest import EXPERIMENTS
from tests.integration.test_league_callback import TINY as DUEL_TINY
from tests.reliability.support import TINY

CARTPOLE_EVAL = [
    *TINY,
    "evaluation={every_env_steps: 400, episodes: 3, parallel: 3, max_steps: 100}",
    "checkpoint.every_iterations=null",
    "checkpoint.keep_last=1",
]


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_single_agent_runs_evaluate_keep_the_best_and_resume(ray_local, tmp_path):
    spec = load_spec(
        EXPERIMENTS / "cartpole_ppo.yaml",
        profile="smoke",
        overrides=[*CARTPOLE_EVAL, "stop.iterations=4"],
    )
    result = train(spec, out_dir=tmp_path)
    run_dir = result.run_dir
    metrics = _rows(run_dir / "metrics.jsonl")
    evaluated = [m["iteration"] for m in metrics if "eval/greedy/return_mean" in m]
    assert evaluated == [2, 4]  # every 400 env steps, 200 per iteration
    # the split's evaluation time: positive exactly in the iterations that evaluated
    assert [m["iteration"] for m in metrics if m["perf/eval_s"] > 0] == evaluated

    rows = _rows(run_dir / "evaluation.jsonl")
    assert [(r["iteration"], r["checkpoint"]) for r in rows] == [
        (2, "iter_000002"),
        (4, "iter_000004"),
    ]
    store = CheckpointStore(run_dir / "checkpoints")
    best = store.best_record()
    winner = max(rows, key=lambda r: r["eval/greedy/return_mean"])  # first wins a tie
    assert best["checkpoint"] == winner["checkpoint"]
    assert best["metric"] == "eval/greedy/return_mean"
    assert (run_dir / "checkpoints" / best["checkpoint"]).is_dir()  # kept despite keep_last=1

    played = CliRunner().invoke(
        app, ["eval", f"checkpoint://{run_dir}/best", "--episodes", "2", "--json"]
    )
    assert played.exit_code == 0, played.output
    assert json.loads(played.stdout)["episodes"] == 2

    resumed = train(
        spec.model_copy(update={"stop": spec.stop.model_copy(update={"iterations": 6})}),
        resume=run_dir / "checkpoints" / "iter_000002",
    )
    assert resumed.iterations == 6
    rows = _rows(run_dir / "evaluation.jsonl")
    assert [r["iteration"] for r in rows] == [2, 4, 6]  # the rewound row 4 was replaced


def test_two_player_runs_evaluate_each_mode_against_each_opponent_and_stop_on_eval(
    ray_local, tmp_path
):
    evaluation = (
        "evaluation={every_env_steps: 300, episodes: 4, parallel: 4, "
        "opponents: [based, constant], modes: [greedy, sampled]}"
    )
    spec = load_spec(
        EXPERIMENTS / "duel_vs_based.yaml",
        overrides=[
            *DUEL_TINY,
            evaluation,
            "stop.iterations=5",
            "stop.eval={greedy/return_mean: -1000}",
        ],
    )
    result = train(spec, out_dir=tmp_path)
    assert result.iterations == 1 and "eval/greedy/return_mean" in result.stop_reason
    last = _rows(result.run_dir / "metrics.jsonl")[-1]
    for mode in ("greedy", "sampled"):
        for opponent in ("based", "constant"):
            assert 0.0 <= last[f"eval/{mode}/win_rate/{opponent}"] <= 1.0
            assert f"eval/{mode}/return_mean/{opponent}" in last
        assert f"eval/{mode}/return_mean" in last
    best = CheckpointStore(result.run_dir / "checkpoints").best_record()
    assert best["metric"] == "eval/greedy/win_rate/based"


def test_the_shipped_duel_recipe_anchors_main_to_its_own_best(ray_local, tmp_path):
    """experiments/duel_selfplay.yaml shrunk: after its plain-PPO phase, main is labelled by
    the run's `best` evaluated checkpoint (pinned, retaken on schedule) on the array runner."""
    shrink = [item for item in DUEL_TINY if not item.startswith("league.opponent_mix")]
    spec = load_spec(
        EXPERIMENTS / "duel_selfplay.yaml",
        overrides=[
            *shrink,
            "evaluation={every_env_steps: 300, episodes: 4, parallel: 4}",
            "bc.phases=[{env_steps: 300}, {teacher: 'checkpoint://{run}/best', "
            "teacher_led: 0.0, student_led: 1.0, coef: 0.2, retake_every_env_steps: 600}]",
            "checkpoint.every_iterations=1",
            "stop.iterations=5",
            "stop.env_steps=null",
        ],
    )
    assert spec.league is not None and spec.env.kwargs["zone_closes_at"] == 0.5
    result = train(spec, out_dir=tmp_path)
    lines = _rows(result.run_dir / "metrics.jsonl")
    assert [int(m["curriculum/phase"]) for m in lines] == [0, 1, 1, 1, 1]
    # The phase starts after iteration 1, before its evaluation marks a `best`: iteration 2
    # waits (plain PPO), then every step of main's is labelled by the teacher (student-led).
    assert [m.get("bc/labelled_steps", 0.0) for m in lines[:2]] == [0.0, 0.0]
    for line in lines[2:]:
        assert line["bc/labelled_steps"] > 0 and line["bc/student_led_frac"] == 1.0, line
    store = CheckpointStore(result.run_dir / "checkpoints")
    pins = load_checkpoint(store.latest()).parts["bc"]["teacher_pins"]
    assert sorted(pins) == ["1.0", "1.1", "1.2"]  # taken at 600 env steps, retaken at 900, 1500
    assert set(pins.values()) == set(store.pins()) and all(
        (store.root / name).is_dir() for name in pins.values()
    )
