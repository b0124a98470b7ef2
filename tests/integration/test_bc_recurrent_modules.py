"""BC + PPO with the recurrent modules (issue #5, item 6), on local Ray with tiny budgets.

1. LSTM on CartPole, teacher `scripted://cartpole/balance`, 4 envs: 1 teacher-led, 2
   student-led, 1 plain. The learner's `bc/accuracy` rises from the first iteration's to
   >= 0.88 within the env-step budget, and on a real `[B, T]` zero-padded learner batch the
   teacher-led and padding steps stay out of the PPO term and the advantage statistics; the
   label replay keeps those `[B, T]` chunks with their initial state, and a replayed batch
   trains the BC term alone.
2. transformer_lstm on the duel against the scripted `based` (a league), 2 envs: 1
   teacher-led, 1 student-led. Teacher-led steps carry the teacher's actions, and the teacher
   is asked about the raw 64-dim observations, not the `{obs, opponent_history,
   history_mask}` dicts the opponent-history piece writes back into the episodes.
"""

import functools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.evaluation.postprocessing import Postprocessing

from rl_platform.base.observation_keys import HISTORY_KEY, SELF_KEY
from rl_platform.bc.extension import bc_extension
from rl_platform.bc.teacher import Teacher
from rl_platform.connectors.label_recorder import LabelRecorder
from rl_platform.imitation.label_replay import LabelReplay, as_bc_only_batch
from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION, BCMode
from rl_platform.losses.bc import ppo_loss_mask
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.run.metrics import extract_metrics
from rl_platform.spec import ExperimentSpec
from tests.integration.duel_support import DUEL_SELF_DIM, TINY_DUEL_TRANSFORMER
from tests.integration.episode_support import module_episodes

LSTM_BATCH, LSTM_ITERATIONS = 400, 12
LSTM_BUDGET = 5000  # env steps: 12 x 400 plus CartPole's auto-reset steps (measured 4821)
LSTM_ACCURACY = 0.88  # mean of the last 3 iterations; measured 0.94 (seed 0), 0.93 (seed 1)
LSTM_RISE = 0.15  # over the first iteration's accuracy (measured 0.59 and 0.60)
MAX_SEQ_LEN = 8
DEFAULT_MODULE = "default_policy"
DUEL_OBS_DIM = 64


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    # Sampling and learning run in this process; torch's 2-thread pool thrashes on these tiny
    # ops on 2 shared cores (see tests/integration/test_lstm_learning.py).
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def _train(algo: Any, iterations: int) -> list[dict[str, float]]:
    history, env_steps = [], 0
    for _ in range(iterations):
        metrics = extract_metrics(algo.train(), previous_env_steps=env_steps)
        env_steps = int(metrics["env_steps"])
        history.append(metrics)
    return history


def _learner_batch(algo: Any, episodes: list[Any]) -> tuple[Any, dict[str, Any]]:
    """The local learner and its train batch for `episodes`: RLlib's learner pieces, GAE,
    then `StudentAdvantages`, the pipeline `Learner.update` runs on episodes."""
    learners: list[Any] = []
    algo.learner_group.foreach_learner(learners.append)  # num_learners=0: runs in-process
    learner = learners[0]
    batch = learner._learner_connector(
        rl_module=learner.module,
        batch={},
        episodes=episodes,
        shared_data={},
        metrics=learner.metrics,
    )
    return learner, batch


# ----- LSTM on CartPole ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def lstm_run(ray_local, one_torch_thread) -> Iterator[tuple[Any, list[dict[str, float]]]]:
    spec = ExperimentSpec.model_validate(
        {
            "name": "bc_lstm_cartpole",
            "seed": 0,
            "env": {"id": "CartPole-v1", "envs_per_runner": 4},
            "model": {
                "type": "lstm",
                "encoder": [32],
                "lstm_cell_size": 32,
                "actor": [32],
                "critic": [32],
                "max_seq_len": MAX_SEQ_LEN,
            },
            "training": {
                "train_batch_size": LSTM_BATCH,
                "minibatch_size": 100,
                "num_epochs": 6,
                "lr": 3e-3,
                # Actor and critic share the LSTM trunk, and CartPole's unscaled returns make
                # the value loss large: at the default 0.5 accuracy reached 0.87 (last 3
                # iterations) instead of 0.94, with vf_clip_param 1e4 it stayed at 0.50-0.58.
                "vf_loss_coeff": 0.01,
            },
            "bc": {
                "teacher": "scripted://cartpole/balance",
                "teacher_led": 0.25,
                "student_led": 0.5,
            },
        }
    )
    algo = build_algorithm_config(spec, extensions=[bc_extension]).build_algo()
    try:
        yield algo, _train(algo, LSTM_ITERATIONS)
    finally:
        algo.stop()


def test_lstm_bc_ppo_learns_to_imitate_the_teacher(lstm_run):
    _, history = lstm_run
    assert history[-1]["env_steps"] <= LSTM_BUDGET
    for metrics in history:
        assert math.isfinite(metrics["loss/bc"]) and math.isfinite(metrics["loss/ppo"])
        assert 0.0 <= metrics["bc/accuracy"] <= 1.0
        # Valid (unpadded) steps per slice: 1 of 4 envs teacher-led, 2 of 4 student-led.
        assert metrics["bc/teacher_led_frac"] == pytest.approx(0.25, abs=0.03)
        assert metrics["bc/student_led_frac"] == pytest.approx(0.5, abs=0.03)
    accuracies = [metrics["bc/accuracy"] for metrics in history]
    final = float(np.mean(accuracies[-3:]))
    assert final >= LSTM_ACCURACY, accuracies
    assert final >= accuracies[0] + LSTM_RISE, accuracies


def test_lstm_teacher_led_and_padded_steps_stay_out_of_ppo(lstm_run):
    algo, _ = lstm_run
    learner, batches = _learner_batch(algo, algo.env_runner.sample(num_timesteps=200, explore=True))
    batch = batches[DEFAULT_MODULE]

    bc_mode, loss_mask = batch[BC_MODE], batch[Columns.LOSS_MASK].bool()
    assert bc_mode.ndim == 2 and bc_mode.shape[1] == MAX_SEQ_LEN
    assert bc_mode.shape == loss_mask.shape == batch[TEACHER_ACTION].shape
    for row, valid in zip(bc_mode, loss_mask, strict=True):
        assert len(set(row[valid].tolist())) == 1, "a sequence comes from one env's chunk"
    row_mode = torch.stack([row[valid][0] for row, valid in zip(bc_mode, loss_mask, strict=True)])
    # Masked out: GAE's bootstrap step (a copy of a chunk's last step) and RLlib's zero padding,
    # which writes mode 0 (PLAIN) into teacher-led sequences too: only the loss mask keeps
    # those steps out of PPO.
    padding = ~loss_mask
    zero_padded = padding & (bc_mode != row_mode[:, None])
    assert bool(zero_padded.any()), "no zero-padded teacher- or student-led sequence"
    assert bool((bc_mode[zero_padded] == BCMode.PLAIN).all())
    teacher_led = (bc_mode == BCMode.TEACHER_LED) & loss_mask
    student_led = (bc_mode == BCMode.STUDENT_LED) & loss_mask
    assert bool(teacher_led.any()) and bool(student_led.any())

    ppo_mask = ppo_loss_mask(bc_mode=bc_mode, loss_mask=loss_mask)
    assert ppo_mask.tolist() == (loss_mask & ~teacher_led).tolist()
    advantages = batch[Postprocessing.ADVANTAGES]
    assert bool((advantages[~ppo_mask] == 0).all())
    assert float(advantages[ppo_mask].mean()) == pytest.approx(0.0, abs=1e-5)
    assert float(advantages[ppo_mask].std(unbiased=False)) == pytest.approx(1.0, abs=1e-4)

    module = learner.module[DEFAULT_MODULE]
    config = learner.config.get_config_for_module(DEFAULT_MODULE)

    def loss(changed: torch.Tensor) -> float:
        """The learner's loss with advantages, value targets and old logp moved on `changed`."""
        moved = dict(batch)
        moved[Postprocessing.ADVANTAGES] = torch.where(changed, advantages + 50.0, advantages)
        targets = batch[Postprocessing.VALUE_TARGETS]
        moved[Postprocessing.VALUE_TARGETS] = torch.where(changed, targets + 99.0, targets)
        logp = batch[Columns.ACTION_LOGP]
        moved[Columns.ACTION_LOGP] = torch.where(changed, logp - 9.0, logp)
        with torch.no_grad():
            return float(
                learner.compute_loss_for_module(
                    module_id=DEFAULT_MODULE,
                    config=config,
                    batch=moved,
                    fwd_out=module.forward_train(moved),
                )
            )

    base = loss(torch.zeros_like(loss_mask))
    assert loss(teacher_led | padding) == pytest.approx(base, abs=1e-5)
    # The same change on the student's steps moves the loss (the test can fail).
    assert abs(loss(student_led) - base) > 1e-2


def test_lstm_label_replay_trains_bc_on_whole_chunks(lstm_run):
    algo, _ = lstm_run
    learner, batches = _learner_batch(algo, algo.env_runner.sample(num_timesteps=200, explore=True))
    replay = LabelReplay(10_000, seed=0)
    LabelRecorder(lambda _, columns, labelled: replay.add(columns, labelled=labelled))(
        rl_module=learner.module, batch=batches
    )
    assert replay.steps_per_row == MAX_SEQ_LEN
    labelled = (batches[DEFAULT_MODULE][BC_MODE] != BCMode.PLAIN) & batches[DEFAULT_MODULE][
        Columns.LOSS_MASK
    ].bool()
    assert replay.labelled_steps == int(labelled.sum())

    replayed = as_bc_only_batch(replay.sample(16))
    assert replayed[Columns.OBS].shape[:2] == (16, MAX_SEQ_LEN)
    assert replayed[Columns.STATE_IN]["h"].shape[0] == 16
    module = learner.module[DEFAULT_MODULE]
    with torch.no_grad():
        fwd_out = module.forward_train(replayed)
        logp = torch.log_softmax(fwd_out[Columns.ACTION_DIST_INPUTS], -1)
        nll = -logp.gather(-1, replayed[TEACHER_ACTION].long()[..., None]).squeeze(-1)
        expected = float(nll[replayed[Columns.LOSS_MASK]].mean())
    learner._replaying = True
    try:
        with torch.no_grad():
            loss = learner.compute_loss_for_module(
                module_id=DEFAULT_MODULE, config=learner.config, batch=replayed, fwd_out=fwd_out
            )
        assert float(loss) == pytest.approx(learner.bc_settings.coef * expected, rel=1e-5)
        before = [p.detach().clone() for p in module.parameters()]
        learner._update({DEFAULT_MODULE: replayed})  # a full BC-only gradient step
    finally:
        learner._replaying = False
    assert any(not torch.equal(a, b) for a, b in zip(before, module.parameters(), strict=True))


# ----- transformer_lstm on the duel ---------------------------------------------------------
@pytest.fixture
def teacher_calls(monkeypatch) -> list[tuple[list[tuple], Any]]:
    """(keys, observations) of every teacher call on this process's env runner."""
    calls: list[tuple[list[tuple], Any]] = []
    original = Teacher.act

    def recording_act(self, uri, obs, *, keys, live_episodes):
        calls.append((list(keys), obs))
        return original(self, uri, obs, keys=keys, live_episodes=live_episodes)

    monkeypatch.setattr(Teacher, "act", recording_act)
    return calls


@pytest.mark.parametrize("runner", ["rllib", "vector"])
def test_transformer_lstm_bc_ppo_on_the_duel(
    ray_local, one_torch_thread, teacher_calls, tmp_path, runner
):
    from rl_platform.rllib.league_callback import league_extension

    spec = ExperimentSpec.model_validate(
        {
            "name": "bc_transformer_duel",
            "seed": 0,
            "env": {
                "id": "rlp/Duel-v0",
                "envs_per_runner": 2,
                "kwargs": {"max_steps": 200},
                "runner": runner,
            },
            "model": TINY_DUEL_TRANSFORMER,
            "training": {"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
            "league": {"opponent_mix": {"based": 1.0}, "scripted": ["based"], "slots": 1},
            "bc": {"teacher": "scripted://duel/based", "teacher_led": 0.5, "student_led": 0.5},
        }
    )
    extension = functools.partial(league_extension, run_dir=tmp_path)
    algo = build_algorithm_config(spec, extensions=[extension, bc_extension]).build_algo()
    try:
        episodes = algo.env_runner.sample(num_timesteps=200, explore=True)
        _check_duel_episodes(episodes, teacher_calls)
        _, batches = _learner_batch(algo, episodes)
        history = _train(algo, 2)
    finally:
        algo.stop()

    # The learner batch holds exactly the sampled steps of `main`, half in each slice: 100
    # vector steps of 2 envs, and no game ended within them (seed 0, 200-frame games).
    bc_mode, loss_mask = batches["main"][BC_MODE], batches["main"][Columns.LOSS_MASK].bool()
    assert int(loss_mask.sum()) == 200
    assert int(((bc_mode == BCMode.TEACHER_LED) & loss_mask).sum()) == 100
    assert int(((bc_mode == BCMode.STUDENT_LED) & loss_mask).sum()) == 100
    for metrics in history:
        assert math.isfinite(metrics["loss/bc"]) and metrics["loss/bc"] > 0.0
        assert math.isfinite(metrics["loss/ppo"])
        assert 0.0 <= metrics["bc/accuracy"] <= 1.0
        # Per-minibatch shares, averaged: RLlib's first epoch is unshuffled, so with 1 epoch
        # they need not be 0.5 each (measured 0.65 / 0.35), but every valid step is labelled.
        assert metrics["bc/teacher_led_frac"] > 0.0 and metrics["bc/student_led_frac"] > 0.0
        assert metrics["bc/teacher_led_frac"] + metrics["bc/student_led_frac"] == pytest.approx(1.0)


def _teacher_key(episode: Any, sa_episode: Any) -> tuple:
    """The key the teacher was asked under: (episode id, agent id) on the stock runner,
    (game uid, seat) on the array runner, whose chunk ids read `<runner>-<game uid>-<n>`."""
    if hasattr(episode, "agent_episodes"):
        return (episode.id_, sa_episode.agent_id)
    return (int(episode.id_.split("-")[1]), int(sa_episode.agent_id.rsplit("_", 1)[1]))


def _check_duel_episodes(episodes: list[Any], teacher_calls: list[tuple[list[tuple], Any]]):
    """Teacher-led steps of `main` carry the teacher's actions; the teacher saw raw obs."""
    # Every teacher call got raw duel observations ([n, 64] arrays, never history dicts).
    raw_by_key: dict[tuple, list[np.ndarray]] = {}
    for keys, obs in teacher_calls:
        assert isinstance(obs, np.ndarray) and obs.shape == (len(keys), DUEL_OBS_DIM)
        for key, row in zip(keys, obs, strict=True):
            raw_by_key.setdefault(key, []).append(row)

    steps = {mode: 0 for mode in BCMode}
    for episode in episodes:
        for module_id, sa_episode in module_episodes(episode):
            n = len(sa_episode)
            if n == 0 or module_id != "main":
                continue
            actions = np.asarray(sa_episode.get_actions(slice(0, n)))
            labels = np.asarray(sa_episode.get_extra_model_outputs(TEACHER_ACTION, slice(0, n)))
            modes = np.asarray(sa_episode.get_extra_model_outputs(BC_MODE, slice(0, n)))
            mode = BCMode(int(modes[0]))
            steps[mode] += n
            if mode == BCMode.TEACHER_LED:
                np.testing.assert_array_equal(actions, labels)
            # The episode stores what the module saw: own features and the opponent's frames,
            # newest last. Step by step, that is the raw observation the teacher was asked about.
            seen = sa_episode.get_observations(slice(0, n))
            raw = np.stack(raw_by_key[_teacher_key(episode, sa_episode)][:n])
            np.testing.assert_array_equal(raw[:, :DUEL_SELF_DIM], seen[SELF_KEY])
            np.testing.assert_array_equal(raw[:, DUEL_SELF_DIM:], seen[HISTORY_KEY][:, -1, :])
    assert steps[BCMode.TEACHER_LED] == steps[BCMode.STUDENT_LED] == 100
    assert steps[BCMode.PLAIN] == 0
