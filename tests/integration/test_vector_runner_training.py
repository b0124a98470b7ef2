"""The array env runner feeding RLlib's learners: recurrent chunks, remote runners, leagues."""

import functools
import math
from typing import Any

import numpy as np
import pytest

from rl_platform.connectors.chunk_states import CHUNK_STATES, STATE_REF
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.rllib.league_callback import league_extension
from rl_platform.spec import validate_spec_data
from tests.integration.test_vector_runner_parity import LSTM, STREAMING, TRANSFORMER

LEAGUE = {
    "opponent_mix": {"based": 0.5, "self_play": 0.3, "constant": 0.2},
    "scripted": ["based", "constant"],
    "slots": 2,
    "snapshot_every": 1,
}


def _spec(model: dict, **extra: Any) -> Any:
    data = {
        "name": "vector_training",
        "algo": "PPO",
        "seed": 1,
        "env": {"id": "rlp/Duel-v0", "envs_per_runner": 8, "kwargs": {"max_steps": 60}},
        "training": {"train_batch_size": 480, "minibatch_size": 240, "num_epochs": 1},
        "model": model,
        "league": LEAGUE,
    }
    return validate_spec_data(data | extra)


def _build(spec: Any, run_dir: Any) -> Any:
    extension = functools.partial(league_extension, run_dir=run_dir)
    return build_algorithm_config(spec, extensions=[extension]).build_algo()


def _by_seat(episodes: list[Any]) -> dict[tuple[str, str], Any]:
    """Chunks keyed by (game uid, agent); the uid sits in the chunk id."""
    return {(e.id_.split("-")[1], e.agent_id): e for e in episodes}


def test_recurrent_chunks_continue_from_the_state_the_runner_used(ray_local, tmp_path) -> None:
    algo = _build(_spec(LSTM, env={"id": "rlp/Duel-v0", "envs_per_runner": 4}), tmp_path)
    try:
        runner = algo.env_runner
        first = _by_seat(runner.sample(num_timesteps=4 * 10, explore=True))
        seats = runner.game.num_seats
        held = {  # the state each seat moves on with after the first call
            (str(uid), agent): {
                k: v[0]
                for k, v in runner._sample_state.states.read(
                    np.array([game * seats + seat])
                ).items()
            }
            for game, uid in enumerate(runner._sample_state.uids.tolist())
            for seat, agent in enumerate(runner.agent_ids)
        }
        second = _by_seat(runner.sample(num_timesteps=4 * 10, explore=True))
    finally:
        algo.stop()
    continued = set(first) & set(second)
    assert continued, "main's seats should continue from the first call into the second"
    for key in continued:
        before, after = first[key], second[key]
        assert before.t_started == 0 and after.t_started == len(before) == 10
        ref = after.get_extra_model_outputs(STATE_REF, -1, neg_index_as_lookback=True)
        lookback = {k: v[ref] for k, v in after.custom_data[CHUNK_STATES].items()}
        for name in ("h", "c"):
            np.testing.assert_array_equal(lookback[name], held[key][name])
            assert np.abs(lookback[name]).sum() > 0  # a real state, not the initial zeros
        assert before.get_observations(-1).tolist() == after.get_observations(0).tolist()


@pytest.mark.parametrize(
    "model", [LSTM, TRANSFORMER, STREAMING], ids=["lstm", "transformer", "streaming"]
)
def test_league_iterations_train_recurrent_modules(ray_local, tmp_path, model) -> None:
    algo = _build(_spec(model), tmp_path)
    try:
        results = [algo.train() for _ in range(2)]
    finally:
        algo.stop()
    learner = results[-1]["learners"]["main"]
    assert math.isfinite(float(learner["policy_loss"])) and learner["num_module_steps_trained"] > 0
    env = results[-1]["env_runners"]
    assert env["league/snapshots_added"] >= 1
    games = sum(env.get(f"league/games/{m}", 0.0) for m in ("based", "constant"))
    assert games > 0


def test_remote_vector_runners_sample_the_league(ray_local, tmp_path) -> None:
    spec = _spec({"type": "mlp", "hidden": [16]}, resources={"env_runners": 1})
    algo = _build(spec, tmp_path)
    try:
        kinds = algo.env_runner_group.foreach_env_runner(
            lambda runner: type(runner).__name__, local_env_runner=False
        )
        result = algo.train()
    finally:
        algo.stop()
    assert kinds == ["BoundVectorEnvRunner"]
    env = result["env_runners"]
    assert env["num_env_steps_sampled"] >= 480
    assert sum(v for k, v in env.items() if str(k).startswith("league/games/")) > 0
