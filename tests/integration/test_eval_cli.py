"""`rlp eval`, `rlp run`, `rlp policies` and policy loading, end to end on tiny budgets.

A real CartPole PPO checkpoint comes from `rl_platform.train` (module fixture); stateful
modules (LSTM, transformer_lstm) are checked on fake runs: a spec.yaml plus a checkpoint with
freshly initialized weights, written with the platform's own checkpoint store.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rl_platform import load_spec
from rl_platform.evaluation.envs import EnvTarget, probe_env
from rl_platform.policies import EnvContext, load_policy
from rl_platform.policies.rebuild import build_module, history_converter
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint, resolve_checkpoint
from rl_platform.storage.saved_spec import write_saved_spec
from tests.integration.cli_support import invoke_rlp as rlp

LSTM_SPEC = """
name: lstm_fake
algo: PPO
env: {id: rlp/StatelessCartPole-v0}
model:
  type: lstm
  encoder: [8]
  lstm_cell_size: 8
  actor: [8]
  critic: [8]
  max_seq_len: 4
logging: {wandb: "off"}
"""
TRANSFORMER_SPEC = """
name: transformer_fake
algo: PPO
env: {id: rlp/Duel-v0}
model:
  type: transformer_lstm
  obs_split: {self: [0, 32], opponent: [32, 64]}
  history: 4
  layers: 1
  heads: 2
  d_model: 16
  obs_encoder: [16]
  lstm_cell_size: 8
  actor: [8]
  critic: [8]
  max_seq_len: 4
logging: {wandb: "off"}
"""
SHORT_DUEL_SPEC = """
name: short_duel
env: {id: rlp/Duel-v0, kwargs: {stocks: 1, max_steps: 300}}
logging: {wandb: "off"}
"""


def rlp_json(*args: str) -> Any:
    return json.loads(rlp(*args, "--json").stdout)


def fake_run(root: Path, spec_text: str, module_id: str) -> Path:
    """A run folder whose checkpoint holds a freshly initialized module of the spec."""
    root.mkdir(parents=True)
    (root / "in.yaml").write_text(spec_text)
    spec = load_spec(root / "in.yaml")
    run_dir = root / "run"
    run_dir.mkdir()
    write_saved_spec(run_dir, spec)
    shape = probe_env(EnvTarget(spec.env.id, tuple(spec.env.wrappers), dict(spec.env.kwargs)))
    obs_space, action_space = shape.spaces[shape.agent_ids[0]]
    converter = history_converter(spec, obs_space)
    rebuilt = build_module(
        spec,
        observation_space=converter.observation_space if converter else obs_space,
        action_space=action_space,
        weights=None,
    )
    modules = {module_id: rebuilt.module.get_state()}
    parts = {ALGORITHM_PART: {"learner_group": {"learner": {"rl_module": modules}}}}
    CheckpointStore(run_dir / "checkpoints").save(iteration=1, parts=parts, meta={})
    return run_dir


def test_eval_checkpoint_json(cartpole_run: Path) -> None:
    uri = f"checkpoint://{cartpole_run}"
    result = rlp_json("eval", uri, "--env", "CartPole-v1", "--episodes", "6", "--seed", "3")
    assert result["policy"] == uri and result["env"] == "CartPole-v1"
    assert result["episodes"] == 6 and "opponent" not in result and "win_rate" not in result
    assert result["return_min"] <= result["return_mean"] <= result["return_max"]
    assert result["return_std"] >= 0 and result["return_min"] >= 8  # CartPole lasts >= 8 steps
    assert result["return_mean"] == pytest.approx(result["length_mean"])  # +1 per step
    # Greedy actions with fixed seeds: the same numbers every time, with or without --env.
    again = rlp_json("eval", uri, "--episodes", "6", "--seed", "3", "--parallel", "2")
    assert again["return_mean"] == result["return_mean"] and again["env"] == "CartPole-v1"
    named = rlp_json("eval", f"{uri}/iter_000001", "--episodes", "2", "--sample")
    assert named["episodes"] == 2 and named["sample"] is True


def test_eval_table_output_and_errors(cartpole_run: Path) -> None:
    uri = f"checkpoint://{cartpole_run}"
    table = rlp("eval", uri, "--episodes", "2").stdout
    assert "return_mean" in table and "CartPole-v1" in table
    cases = [
        ((f"{uri}?module=opponent_9", "--episodes", "1"), "modules: default_policy"),
        ((uri, "--env", "Acrobot-v1", "--episodes", "1"), "trained on CartPole-v1"),
        ((f"{uri}/iter_000099", "--episodes", "1"), "no checkpoint"),
        ((f"chekpoint://{cartpole_run}", "--env", "CartPole-v1"), "Did you mean checkpoint://"),
        (("checkpoint:///no/such/run", "--env", "CartPole-v1"), "does not exist"),
        (("scripted://duel/based", "--env", "CartPole-v1"), "plays rlp/Duel-v0"),
        (("random", "--env", "CartPol-v1"), "did you mean CartPole-v1"),
        (("random", "--env", "CartPole-v1", "--opponent", "random"), "two-player"),
        (("random", "--episodes", "1"), "--env is required"),
        (("random", "--env", "CartPole-v1", "--episodes", "0"), "Invalid value for '--episodes'"),
    ]
    for args, message in cases:
        result = rlp("eval", *args, code=2)
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_league_member_with_checkpoint_weights_plays_like_the_checkpoint(
    cartpole_run: Path, tmp_path: Path
) -> None:
    from rl_platform.league import LeaguePool, Member, MemberKind

    run_dir = tmp_path / "league_run"
    shutil.copytree(cartpole_run, run_dir)
    loaded = load_checkpoint(resolve_checkpoint(run_dir))
    weights = module_weights(loaded.parts[ALGORITHM_PART])["default_policy"]
    pool = LeaguePool(run_dir / "league")
    pool.add_frozen(member_id="main_v1", weights=weights)
    pool.add_member(Member(id="balance", kind=MemberKind.SCRIPTED, metadata={"agent": "balance"}))
    pool.save()
    args = ("--env", "CartPole-v1", "--episodes", "4")
    frozen = rlp_json("eval", f"league://{run_dir}/main_v1", *args)
    direct = rlp_json("eval", f"checkpoint://{run_dir}", *args)
    assert frozen["return_mean"] == direct["return_mean"]
    assert rlp_json("eval", f"league://{run_dir}/balance", *args)["return_mean"] == 500.0
    missing = rlp("eval", f"league://{run_dir}/nobody", *args, code=2)
    assert "no league member 'nobody'" in missing.stderr
    assert "has no league" in rlp("eval", f"league://{cartpole_run}/x", *args, code=2).stderr


def test_scripted_cartpole_and_connect_four() -> None:
    balance = rlp_json("eval", "scripted://cartpole/balance", "--env", "cartpole", "-n", "3")
    assert balance["return_mean"] == 500.0 and balance["return_std"] == 0.0
    connect = rlp_json(
        "eval", "scripted://connect_four/one_ply", "--env", "connect_four", "--opponent",
        "random", "-n", "10",
    )  # fmt: skip
    assert connect["win_rate"] >= 0.8 and connect["seat"] == "player_0"
    assert connect["win_rate"] + connect["draw_rate"] + connect["loss_rate"] == pytest.approx(1.0)


def test_seat_option_swaps_and_alternates_the_first_mover() -> None:
    # one_ply against itself is deterministic, so each seating replays one game.
    def mirror(seat: str, episodes: int) -> dict[str, Any]:
        return rlp_json(
            "eval", "scripted://connect_four/one_ply", "--env", "connect_four",
            "--opponent", "scripted://connect_four/one_ply", "-n", str(episodes), "--seat", seat,
        )  # fmt: skip

    first, second, alternate = mirror("first", 2), mirror("second", 2), mirror("alternate", 4)
    assert first["seat"] == "player_0" and alternate["seat"] == "alternate"
    assert first["win_rate"] in (0.0, 1.0) and first["win_rate"] == second["loss_rate"]
    assert alternate["win_rate"] == pytest.approx((first["win_rate"] + second["win_rate"]) / 2)
    bad = rlp("eval", "random", "--env", "connect_four", "--seat", "middle", code=2)
    assert "--seat must be one of" in bad.stderr
    single = rlp("eval", "random", "--env", "cartpole", "-n", "1", "--seat", "second", code=2)
    assert "two-player envs" in single.stderr


def test_duel_eval_from_a_spec_file_reports_wins_and_reward_components(tmp_path: Path) -> None:
    spec = tmp_path / "short_duel.yaml"
    spec.write_text(SHORT_DUEL_SPEC)
    result = rlp_json(
        "eval", "scripted://duel/based", "--opponent", "scripted://duel/constant",
        "--env", str(spec), "-n", "4",
    )  # fmt: skip
    assert result["opponent"] == "scripted://duel/constant" and result["env"] == "rlp/Duel-v0"
    assert result["length_max"] <= 300  # the spec's max_steps reached the env
    assert result["win_rate"] == 1.0
    components = result["reward_components"]
    assert {"damage_dealt", "damage_taken", "knockout", "win_loss"} <= set(components)
    assert components["damage_dealt"] > 0 and components["damage_taken"] == 0.0
    default_opponent = rlp_json("eval", "random", "--env", "duel", "-n", "1", "--max-steps", "5")
    assert default_opponent["opponent"] == "scripted://duel/based"
    assert default_opponent["cut_by_max_steps"] == 1 and "win_rate" not in default_opponent


def test_run_splits_duel_seats_by_proportion() -> None:
    result = rlp_json(
        "run", "--env", "duel", "-p", "scripted://duel/based,proportion=1",
        "-p", "scripted://duel/constant,proportion=3", "--episodes", "4", "--max-steps", "40",
    )  # fmt: skip
    rows = {row["policy"]: row for row in result["policies"]}
    based, constant = rows["scripted://duel/based"], rows["scripted://duel/constant"]
    assert (based["seats"], constant["seats"]) == (2, 6)  # 8 seats split 1:3
    assert based["proportion"] == 1.0 and constant["proportion"] == 3.0
    for row in (based, constant):  # every seat is a decided game in `vs` or a cut game
        decided = sum(v["games"] for v in row["vs"].values())
        assert decided + row.get("cut_by_max_steps", 0) == row["seats"]
        assert set(row["vs"]) <= set(rows)
    table = rlp("run", "--env", "duel", "-p", "random", "-n", "1", "--max-steps", "3").stdout
    assert "random on rlp/Duel-v0" in table
    bad = rlp("run", "--env", "duel", "-p", "random,share=2", "-n", "1", code=2)
    assert "proportion" in bad.stderr


def test_policies_command_lists_scripted_policies() -> None:
    entries = rlp_json("policies")
    uris = {entry["uri"] for entry in entries}
    assert {"scripted://duel/based", "scripted://cartpole/balance"} <= uris
    assert "scripted://duel/based" in rlp("policies").stdout


def test_lstm_checkpoint_keeps_one_state_per_key(tmp_path: Path) -> None:
    run_dir = fake_run(tmp_path / "lstm", LSTM_SPEC, "default_policy")
    result = rlp_json("eval", f"checkpoint://{run_dir}", "-n", "3", "--parallel", "2")
    assert result["env"] == "rlp/StatelessCartPole-v0" and result["episodes"] == 3

    shape = probe_env(EnvTarget("rlp/StatelessCartPole-v0"))
    context = EnvContext("rlp/StatelessCartPole-v0", *shape.spaces["agent"])
    policy = load_policy(f"checkpoint://{run_dir}", env=context)
    rng = np.random.default_rng(0)
    obs = np.random.default_rng(1).normal(size=(5, 2, 2)).astype(np.float32)
    for t in range(5):  # keys a and b together ...
        policy.act(obs[t], rng, keys=["a", "b"])
    for t in range(5):  # ... equal key c alone on a's observations
        policy.act(obs[t, :1], rng, keys=["c"])
    for name in ("h", "c"):
        np.testing.assert_allclose(policy.state("a")[name], policy.state("c")[name], atol=1e-6)
        assert not np.allclose(policy.state("a")[name], policy.state("b")[name])
    policy.forget(["a"])
    assert policy.state("a") is None and policy.state("b") is not None


def test_transformer_lstm_checkpoint_plays_the_duel(tmp_path: Path) -> None:
    run_dir = fake_run(tmp_path / "transformer", TRANSFORMER_SPEC, "main")
    result = rlp_json("eval", f"checkpoint://{run_dir}?module=main", "-n", "2", "--max-steps", "8")
    assert result["env"] == "rlp/Duel-v0" and result["length_max"] == 8.0
    assert result["opponent"] == "scripted://duel/based"


def test_rlp_eval_says_no_rllib_notice_on_the_console_nor_the_config_deprecation(
    tmp_path: Path,
) -> None:
    """`rlp eval` as a user runs it: no notice of RLlib's on the console. The one it gave here,
    the `RLModule(config=...)` deprecation that RLlib's own module constructor triggers, is not
    said at all since our modules take it (issue #58, `modules/config_notice.py`); that Ray's
    notices go to the log file is `ray_logs_to`'s test (tests/unit/test_ray_session.py)."""
    run_dir = fake_run(tmp_path / "transformer", TRANSFORMER_SPEC, "main")
    logs = tmp_path / "logs"
    rlp_binary = Path(sys.executable).with_name("rlp")
    result = subprocess.run(
        [str(rlp_binary), "eval", f"checkpoint://{run_dir}?module=main", "-n", "2",
         "--max-steps", "8", "--json"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "RLP_LOG_DIR": str(logs)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["episodes"] == 2
    assert "Deprecation" not in result.stderr and "WARNING" not in result.stderr
    assert "RLModule(config=" not in (logs / "rlp.log").read_text()
