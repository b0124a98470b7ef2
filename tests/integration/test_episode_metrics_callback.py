"""The stock runner's metrics callback counts the trained module's own seat only, over every
chunk of an episode that spans several `sample()` calls (no Ray session needed)."""

import math

import numpy as np
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from rl_platform.base.metric_keys import ACTION_COUNTS, LEARNER_RETURN_MEAN
from rl_platform.run.episode_metrics import EpisodeMetricsCallback
from rl_platform.run.metrics import extract_metrics

MODULES = {"player_0": "main", "player_1": "opponent_0"}
OBS = {agent: np.zeros(2, np.float32) for agent in MODULES}


class RecordingLogger:
    """The part of RLlib's MetricsLogger the callback uses: every logged value, by key."""

    def __init__(self) -> None:
        self.values: dict[object, list[float]] = {}
        self.reduce: dict[object, str | None] = {}

    def log_value(self, key, value, *, reduce=None, window=None) -> None:
        self.values.setdefault(key, []).append(value)
        self.reduce[key] = reduce


def _step(episode: MultiAgentEpisode, t: int) -> None:
    """main (player_0) deals 1 damage per step and acts `t % 3`; the opponent always acts 7."""
    infos = {
        "player_0": {"reward_components": {"damage_dealt": 1.0, "damage_taken": 0.0}},
        "player_1": {"reward_components": {"damage_dealt": 0.0, "damage_taken": -1.0}},
    }
    episode.add_env_step(
        observations=OBS,
        actions={"player_0": t % 3, "player_1": 7},
        rewards={"player_0": 1.0, "player_1": -1.0},
        infos=infos,
    )


def _two_chunk_episode() -> tuple[MultiAgentEpisode, MultiAgentEpisode]:
    first = MultiAgentEpisode(agent_module_ids=MODULES)
    first.add_env_reset(observations=OBS, infos={agent: {} for agent in MODULES})
    for t in range(4):
        _step(first, t)
    second = first.cut()  # what the runner does at the end of a sample() call
    for t in range(4, 10):
        _step(second, t)
    return first, second


def test_returns_and_components_are_mains_own_over_every_chunk():
    first, second = _two_chunk_episode()
    logger = RecordingLogger()
    EpisodeMetricsCallback().on_episode_end(
        episode=second, prev_episode_chunks=[first], metrics_logger=logger
    )
    assert logger.values[LEARNER_RETURN_MEAN] == [10.0]  # main's 10 steps, both chunks
    assert logger.values["reward/damage_dealt"] == [10.0]  # not 10 - 10 = 0 over both seats
    assert logger.values["reward/damage_taken"] == [0.0]


def test_action_counts_cover_every_action_main_took_and_name_the_fractions():
    first, second = _two_chunk_episode()
    logger = RecordingLogger()
    EpisodeMetricsCallback().on_sample_end(samples=[first, second], metrics_logger=logger)
    counts = {key[1]: sum(v) for key, v in logger.values.items() if key[0] == ACTION_COUNTS}
    assert counts == {"0": 4, "1": 3, "2": 3}  # t % 3 over t = 0..9; the opponent's 7s absent
    assert {logger.reduce[key] for key in logger.values} == {"sum"}

    result = {"env_runners": {ACTION_COUNTS: counts}}
    names = ("idle", "left", "right")
    metrics = extract_metrics(result, previous_env_steps=0, action_names=names)
    fractions = {k: v for k, v in metrics.items() if k.startswith("actions/")}
    assert fractions == {
        "actions/idle_frac": 0.4,
        "actions/left_frac": 0.3,
        "actions/right_frac": 0.3,
    }
    assert math.isclose(sum(fractions.values()), 1.0)
