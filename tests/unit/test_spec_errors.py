"""Bad specs: one line per problem naming the dotted path, the value and a hint; exit code 2."""

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import SpecError
from rl_platform.cli import app
from rl_platform.spec import load_spec

OK = "name: demo\nenv: {id: CartPole-v1}\nstop: {iterations: 1}\n"

# (spec text, text every error must contain)
BAD_SPECS = {
    "typo_section": ("trainng: {lr: 0.001}\n" + OK, ["trainng", "did you mean 'training'"]),
    "typo_field": (OK + "training: {lamda: 0.9}\n", ["training.lamda", "'lambda'"]),
    "lr_too_big": (OK + "training: {lr: 5.0}\n", ["training.lr", "5.0", "<= 1"]),
    "lr_negative": (OK + "training: {lr: -1}\n", ["training.lr", "> 0"]),
    "epochs_zero": (OK + "training: {num_epochs: 0}\n", ["training.num_epochs", "> 0"]),
    "wrong_type": (
        OK + "training: {train_batch_size: lots}\n",
        ["training.train_batch_size", "lots"],
    ),
    "unknown_env": (
        "name: demo\nenv: {id: CartPol-v1}\nstop: {iterations: 1}\n",
        ["env.id", "CartPole-v1"],
    ),
    "unknown_algo": (OK + "algo: A2C\n", ["algo", "A2C"]),
    "bad_device": (OK + "resources: {device: tpu}\n", ["resources.device", "tpu"]),
    "negative_runners": (OK + "resources: {env_runners: -1}\n", ["resources.env_runners", ">= 0"]),
    "missing_env": ("name: demo\nstop: {iterations: 1}\n", ["env", "missing"]),
    "bad_name": (
        "name: ../escape\nenv: {id: CartPole-v1}\nstop: {iterations: 1}\n",
        ["name", "folder"],
    ),
    "empty_stop": ("name: demo\nenv: {id: CartPole-v1}\nstop: {}\n", ["stop", "at least one"]),
    "bad_wandb": (OK + "logging: {wandb: maybe}\n", ["logging.wandb", "maybe"]),
    "unresolved_var": (OK + "seed: ${vars.nope}\n", ["seed", "interpolation"]),
    "kv_heads_not_dividing": (
        "name: demo\nenv: {id: rlp/Duel-v0}\nstop: {iterations: 1}\n"
        "model: {type: transformer_lstm, obs_split: {self: [0, 32], opponent: [32, 64]}, "
        "kv_heads: 3}\n",
        ["model", "heads (8) must be a multiple of kv_heads (3)"],
    ),
    "opponent_action_on_rllib_runner": (
        "name: demo\nenv: {id: rlp/Duel-v0, runner: rllib}\nstop: {iterations: 1}\n"
        "model: {type: transformer_lstm, obs_split: {self: [0, 32], opponent: [32, 64]}, "
        "opponent_action: 0.25}\n",
        ["model.opponent_action 0.25", "only the array runner records", "opponent_action: 0"],
    ),
    "replay_on_two_learners": (
        OK + "resources: {learners: 2}\n"
        "bc: {teacher: 'scripted://cartpole/balance', replay: {updates_per_minibatch: 2}}\n",
        ["bc.replay", "resources.learners=2", "set resources.learners to 0 or 1"],
    ),
    "replay_zero_updates": (
        OK + "bc: {teacher: 'scripted://cartpole/balance', replay: {updates_per_minibatch: 0}}\n",
        ["bc.replay.updates_per_minibatch", "> 0"],
    ),
    "lr_schedule_late_start": (
        OK + "training: {lr_schedule: [[1000, 3.0e-4]]}\n",
        ["training.lr_schedule", "must start at 0 env steps", "[1000]"],
    ),
    "lr_schedule_unordered": (
        OK + "training: {lr_schedule: [[0, 3.0e-4], [5000, 1.0e-4], [5000, 1.0e-5]]}\n",
        ["training.lr_schedule", "must increase", "[0, 5000, 5000]"],
    ),
    "lr_schedule_with_auto_scale": (
        OK + "training: {lr_schedule: [[0, 3.0e-4]], auto_scale: true}\n",
        ["lr_schedule and auto_scale", "pick one"],
    ),
    "run_teacher_at_step_0": (
        OK + "bc: {teacher: 'checkpoint://{run}/latest'}\n",
        ["bc.teacher", "no checkpoint at env step 0", "phase without a teacher"],
    ),
    "run_best_without_evaluation": (
        OK + "bc: {phases: [{env_steps: 1000}, {teacher: 'checkpoint://{run}/best'}]}\n",
        ["bc.phases[1].teacher", "evaluation:"],
    ),
    "run_best_before_first_evaluation": (
        OK + "evaluation: {every_env_steps: 5000, episodes: 5}\n"
        "bc: {phases: [{env_steps: 1000}, {teacher: 'checkpoint://{run}/best'}]}\n",
        ["bc.phases[1].teacher", "starts at 1,000 env steps", "every_env_steps = 5,000"],
    ),
    "hide_unknown_feature": (
        "name: demo\nenv: {id: rlp/Duel-v0, hide: [hp, sheild]}\nstop: {iterations: 1}\n",
        ["env.hide", "no observation feature 'sheild'", "did you mean 'shield'?"],
    ),
    "hide_on_env_without_names": (
        "name: demo\nenv: {id: CartPole-v1, hide: [x]}\nstop: {iterations: 1}\n",
        ["env.hide", "CartPole-v1 does not name its observation features", "rlp/Duel-v0"],
    ),
    "empty_file": ("", ["empty"]),
    "not_yaml": ("name: [unclosed\n", ["not valid YAML", "line"]),
    "not_mapping": ("- a\n- b\n", ["mapping"]),
    "python_tag": ("!!python/object/apply:os.system ['true']\n", ["tag", "not allowed"]),
    "dqn_key_on_ppo": (OK + "training: {double_q: true}\n", ["training.double_q", "unknown key"]),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_bad_spec_names_the_path(case, write_spec):
    text, expected = BAD_SPECS[case]
    with pytest.raises(SpecError) as info:
        load_spec(write_spec(text))
    message = str(info.value)
    for fragment in expected:
        assert fragment in message, f"{fragment!r} missing from:\n{message}"


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_cli_exits_2_without_traceback(case, write_spec):
    text, expected = BAD_SPECS[case]
    result = CliRunner().invoke(app, ["validate", str(write_spec(text))])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert expected[0] in result.output


def test_validate_prints_resolved_spec(write_spec):
    result = CliRunner().invoke(app, ["validate", str(write_spec(OK)), "--set", "training.lr=0.01"])
    assert result.exit_code == 0, result.output
    assert "lr: 0.01" in result.output and "name: demo" in result.output


def test_missing_file_is_a_user_error(tmp_path):
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2 and "file not found" in result.output
