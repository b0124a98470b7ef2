"""BC on CartPole with the scripted balance controller as teacher, online (every env teacher-led,
coef only): >= 95% accuracy on the teacher's states and a greedy return >= 400 within the
6000-env-step budget of experiments/cartpole_bc.yaml. Then `init_from:` starts a plain PPO
run from those weights, and `rlp record` writes data in the format RLlib's offline BC reads.
"""

import gymnasium as gym
import numpy as np
import pytest

from rl_platform import load_spec, train
from rl_platform.policies import EnvContext, load_policy
from rl_platform.spec import ExperimentSpec
from rl_platform.teachers.cartpole import make_balance
from tests.conftest import EXPERIMENTS

ENV_ID = "CartPole-v1"
BUDGET = 6000  # env steps (experiments/cartpole_bc.yaml stop.env_steps)


@pytest.fixture(scope="module")
def bc_run(ray_local, tmp_path_factory):
    spec = load_spec(EXPERIMENTS / "cartpole_bc.yaml", overrides=["logging.wandb=off"])
    assert spec.stop.env_steps == BUDGET and spec.bc is not None and spec.bc.teacher_led == 1.0
    return train(spec, out_dir=tmp_path_factory.mktemp("bc_runs"))


def _teacher_states(episodes: int) -> np.ndarray:
    env, teacher, rng = gym.make(ENV_ID), make_balance({}), np.random.default_rng(0)
    states = []
    for episode in range(episodes):
        obs, _ = env.reset(seed=1000 + episode)
        done = False
        while not done:
            states.append(obs)
            obs, _, terminated, truncated, _ = env.step(int(teacher(obs[None], rng)[0]))
            done = terminated or truncated
    return np.stack(states)


def _greedy_returns(policy, episodes: int) -> list[float]:
    env, rng, returns = gym.make(ENV_ID), np.random.default_rng(0), []
    for episode in range(episodes):
        obs, _ = env.reset(seed=2000 + episode)
        done, total = False, 0.0
        while not done:
            action = int(policy.act(obs[None], rng, keys=[episode])[0])
            obs, reward, terminated, truncated, _ = env.step(action)
            total, done = total + float(reward), terminated or truncated
        returns.append(total)
    return returns


def test_online_bc_matches_the_teacher_within_budget(bc_run):
    assert bc_run.env_steps <= BUDGET
    last = bc_run.history[-1]
    for key in ("loss/bc", "bc/accuracy", "bc/teacher_led_frac", "curriculum/phase", "bc/coef"):
        assert key in last, key
    assert last["bc/teacher_led_frac"] == 1.0 and last["curriculum/phase"] == 0.0

    env = gym.make(ENV_ID)
    context = EnvContext(ENV_ID, env.observation_space, env.action_space)
    student = load_policy(f"checkpoint://{bc_run.run_dir}", env=context)
    states = _teacher_states(4)
    teacher = make_balance({})(states, np.random.default_rng(0))
    accuracy = float(
        (student.act(states, np.random.default_rng(0), keys=range(len(states))) == teacher).mean()
    )
    assert accuracy >= 0.95, accuracy
    returns = _greedy_returns(student, 5)
    assert np.mean(returns) >= 400, returns


def test_init_from_starts_ppo_from_the_bc_weights(bc_run):
    from rl_platform.bc.extension import bc_extension
    from rl_platform.bc.init_from import load_init_weights
    from rl_platform.rllib.config import build_algorithm_config

    spec = load_spec(EXPERIMENTS / "cartpole_bc.yaml")
    spec = spec.model_copy(update={"bc": None, "init_from": str(bc_run.run_dir)})
    _, saved = load_init_weights(bc_run.run_dir)
    algo = build_algorithm_config(spec, extensions=[bc_extension]).build_algo()
    try:
        learner_state = algo.learner_group.get_weights()["default_policy"]
        runner_state = algo.env_runner.module.get_state()
    finally:
        algo.stop()
    policy = [name for name in saved if name.startswith(("encoder.actor_encoder", "pi."))]
    assert policy
    for name in policy:
        np.testing.assert_array_equal(np.asarray(learner_state[name]), saved[name])
        np.testing.assert_array_equal(np.asarray(runner_state[name]), saved[name])


def test_record_writes_what_rllib_offline_bc_reads(ray_local, tmp_path):
    import ray
    from ray.rllib.offline.offline_prelearner import OfflinePreLearner

    from rl_platform.bc.extension import bc_extension
    from rl_platform.bc.record import record
    from rl_platform.rllib.config import build_algorithm_config

    summary = record("scripted://cartpole/balance", env_id=ENV_ID, episodes=2, out=tmp_path / "d")
    assert (summary.episodes, summary.steps, summary.return_mean) == (2, 1000, 500.0)

    spec = ExperimentSpec.model_validate(
        {
            "name": "bc_offline_format",
            "algo": "BC",
            "env": {"id": ENV_ID},
            "training": {"dataset": str(tmp_path / "d"), "train_batch_size": 64},
            "model": {"hidden": [8]},
        }
    )
    config = build_algorithm_config(spec, extensions=[bc_extension])
    rows = ray.data.read_parquet(str(tmp_path / "d" / "data")).take_batch(64, batch_format="numpy")
    env = gym.make(ENV_ID)
    spaces = (env.observation_space, env.action_space)
    # Built as RLlib's Algorithm builds it for OfflineData (ray/rllib/algorithms/algorithm.py).
    module_spec = config.get_multi_rl_module_spec(spaces={"default_policy": spaces})
    prelearner = OfflinePreLearner(config=config, spaces=spaces, module_spec=module_spec)
    batch = prelearner(rows)  # the exact map RLlib's offline data runs over each block
    obs, actions = batch["default_policy/obs"], np.asarray(batch["default_policy/actions"])
    assert len(obs) == len(actions) == 64
    np.testing.assert_array_equal(actions, make_balance({})(obs, np.random.default_rng(0)))


def test_curriculum_moves_through_phases_and_resumes_in_its_phase(ray_local, tmp_path):
    from rl_platform.imitation.schedule import settings_at
    from rl_platform.spec import resolve_spec_data
    from rl_platform.storage.metrics_rows import read_metrics

    phases = [
        {
            "teacher": "scripted://cartpole/balance",
            "teacher_led": 1.0,
            "student_led": 0.0,
            "env_steps": 400,
        },
        {"teacher": "random", "teacher_led": 0.0, "student_led": 1.0, "env_steps": 400},
    ]
    tiny = ["training.train_batch_size=200", "training.minibatch_size=100", "training.num_epochs=1"]

    def spec(iterations: int) -> ExperimentSpec:
        overrides = [*tiny, f"stop.iterations={iterations}", "stop.env_steps=null"]
        data = resolve_spec_data(EXPERIMENTS / "cartpole_bc.yaml", overrides=overrides)
        return ExperimentSpec.model_validate({**data, "bc": {"phases": phases}})

    first = train(spec(2), out_dir=tmp_path)
    train(spec(5), resume=first.run_dir)
    lines = read_metrics(first.run_dir)
    assert [int(m["iteration"]) for m in lines] == [1, 2, 3, 4, 5]
    bc = spec(5).bc
    previous = 0
    for line in lines:  # each iteration runs with the settings for the env steps at its start
        assert line["curriculum/phase"] == settings_at(bc, previous).phase, line
        previous = int(line["env_steps"])
    assert [int(m["curriculum/phase"]) for m in lines][2] >= 1  # iteration 3 is after a resume
    assert {int(m["curriculum/phase"]) for m in lines} >= {0, 1}


def _own_checkpoint_spec(*, env_runners: int, iterations: int) -> ExperimentSpec:
    """Plain PPO for 400 env steps, then BC to the run's own latest checkpoint."""
    from rl_platform.spec import resolve_spec_data

    phases = [
        {"env_steps": 400},
        {"teacher": "checkpoint://{run}/latest", "teacher_led": 0.0, "student_led": 1.0},
    ]
    overrides = [
        "training.train_batch_size=200",
        "training.minibatch_size=100",
        "training.num_epochs=1",
        "checkpoint.every_iterations=1",
        "checkpoint.keep_last=1",
        "stop.env_steps=null",
        f"resources.env_runners={env_runners}",
        f"stop.iterations={iterations}",
    ]
    data = resolve_spec_data(EXPERIMENTS / "cartpole_bc.yaml", overrides=overrides)
    return ExperimentSpec.model_validate({**data, "bc": {"phases": phases}})


def _check_own_teacher(lines: list[dict], run_dir, *, last: int) -> str:
    """Phase 0 for 2 iterations, then labels from iter_000001, pinned and kept; the log."""
    from rl_platform.storage.checkpoints import CheckpointStore

    assert [int(m["curriculum/phase"]) for m in lines] == [0, 0] + [1] * (last - 2)
    assert all(m.get("bc/labelled_steps", 0.0) == 0.0 for m in lines[:2])  # no teacher yet
    for line in lines[2:]:  # labelled by an earlier self: the student stays close to it
        assert line["bc/labelled_steps"] > 0 and line["bc/accuracy"] > 0.5, line
    # Phase 1 starts after iteration 2 crosses 400 env steps, before iteration 2's checkpoint
    # is written: `latest` is then iteration 1's.
    store = CheckpointStore(run_dir / "checkpoints")
    assert store.pins() == {"iter_000001": "bc phase 1 teacher"}
    names = [p.name for p in store.complete_checkpoints()]
    assert names == ["iter_000001", f"iter_{last:06d}"]  # the pinned teacher outlives keep_last=1
    log = (run_dir / "train.log").read_text()
    assert log.count("bc: phase 1 learns from this run's iter_000001") == 1  # not re-pinned
    return log


def test_a_phase_learns_from_this_runs_own_checkpoint(ray_local, tmp_path):
    """Plain PPO first, then BC to the run's own checkpoint taken at the turn: pinned, kept by
    retention, and the same teacher after a resume."""
    from rl_platform.storage.metrics_rows import read_metrics

    first = train(_own_checkpoint_spec(env_runners=0, iterations=4), out_dir=tmp_path)
    train(_own_checkpoint_spec(env_runners=0, iterations=6), resume=first.run_dir)
    log = _check_own_teacher(read_metrics(first.run_dir), first.run_dir, last=6)
    teacher = f"bc: teacher checkpoint://{first.run_dir.resolve()}/iter_000001"
    assert log.count(teacher) == 2  # the local env runner, before and after the resume


def test_a_remote_env_runner_gets_this_runs_teacher_shipped(ray_local, tmp_path):
    """As above on a remote env runner, which gets the teacher's spec and weights from the
    driver (`BCCallback.ship_teacher`). No resume: a resumed run ships through the same
    `push`, and the test above checks that a resume keeps the teacher; a second remote runner
    start would cost more than the rest of this test."""
    from rl_platform.storage.metrics_rows import read_metrics

    run = train(_own_checkpoint_spec(env_runners=1, iterations=4), out_dir=tmp_path)
    _check_own_teacher(read_metrics(run.run_dir), run.run_dir, last=4)
