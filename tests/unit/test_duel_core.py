"""Rules and vectorization of the duel core: frame data, blocking, knockouts, game end."""

from dataclasses import fields

import numpy as np
import pytest

from rl_platform.base.errors import UserError
from rl_platform.envs.catalog import PLATFORM_ENVS
from rl_platform.envs.duel import (
    DEFAULT_REWARD_WEIGHTS,
    NUM_ACTIONS,
    OBS_SIZE,
    OPPONENT_SLICE,
    REWARD_COMPONENTS,
    SELF_SLICE,
    Action,
    DuelCore,
    Mode,
    Obs,
)
from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.arena import run_matches
from rl_platform.envs.duel.config import DuelConfig
from rl_platform.envs.duel.core import DRAW
from rl_platform.envs.duel.observation import HALF_SIZE, OBS_BOUND
from rl_platform.envs.duel.scripted import act_constant

IDLE, LIGHT, HEAVY = Action.IDLE, Action.LIGHT, Action.HEAVY


def make_core(num_games: int = 1, **kwargs) -> DuelCore:
    kwargs.setdefault("seed", 0)
    kwargs.setdefault("spawn_jitter", 0.0)
    return DuelCore(num_games, **kwargs)


def place(core: DuelCore, player: int, *, x: float, y: float = 0.0, game: int = 0, **fields):
    s = core.state
    s.x[game, player], s.y[game, player] = x, y
    s.on_ground[game, player] = y in (0.0, R.PLATFORM_Y)
    for name, value in fields.items():
        getattr(s, name)[game, player] = value


def step_same(core: DuelCore, a0: int, a1: int, times: int = 1):
    result = None
    for _ in range(times):
        result = core.step(np.tile(np.array([[a0, a1]]), (core.num_games, 1)))
    return result


def test_public_constants_and_layout() -> None:
    assert NUM_ACTIONS == 10 and len(Action) == 10
    assert OBS_SIZE == 64
    assert (SELF_SLICE.start, SELF_SLICE.stop) == (0, 32)
    assert (OPPONENT_SLICE.start, OPPONENT_SLICE.stop) == (32, 64)
    obs = make_core(3).observe()
    assert obs.shape == (3, 2, 64) and obs.dtype == np.float32
    # Each agent sees itself first: player 1's own HP is the opponent HP for player 0.
    core = make_core()
    core.state.hp[0] = [80.0, 40.0]
    obs = core.observe()
    assert obs[0, 0, Obs.HP] == pytest.approx(0.8)
    assert obs[0, 0, 32 + Obs.HP] == pytest.approx(0.4)
    assert obs[0, 1, Obs.HP] == pytest.approx(0.4)


def _public(obs: np.ndarray) -> np.ndarray:
    """The observation without the viewer's private draw (the one feature the sides differ in)."""
    public = obs.copy()
    public[..., Obs.PRIVATE_DRAW] = 0.0
    return public


def test_egocentric_mirror_makes_both_sides_identical() -> None:
    core = make_core(64)
    rng = np.random.default_rng(1)
    obs = _public(core.observe())
    assert np.array_equal(obs[:, 0], obs[:, 1])
    for _ in range(300):
        actions = rng.integers(0, NUM_ACTIONS, size=64)
        result = core.step(np.stack([actions, actions], axis=1))
        np.testing.assert_allclose(_public(result.obs[:, 0]), _public(result.obs[:, 1]), atol=1e-5)
        np.testing.assert_allclose(result.rewards[:, 0], result.rewards[:, 1], atol=1e-6)


def test_player_one_actions_are_mirrored() -> None:
    core = make_core()
    start = core.state.x[0].copy()
    step_same(core, Action.RIGHT, Action.RIGHT, times=3)
    assert core.state.x[0, 0] > start[0]  # player 0: world +x
    assert core.state.x[0, 1] < start[1]  # player 1: its "right" is world -x
    assert core.observe()[0, 1, Obs.X] == pytest.approx(core.observe()[0, 0, Obs.X])


def test_deterministic_given_seed_and_different_across_seeds() -> None:
    rng = np.random.default_rng(0)
    actions = rng.integers(0, NUM_ACTIONS, size=(100, 16, 2))
    runs = []
    for seed in (7, 7, 8):
        core = DuelCore(16, seed=seed, auto_reset=True)
        obs = [core.observe()] + [core.step(a).obs for a in actions]
        runs.append(np.stack(obs))
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_light_attack_frame_data_and_damage_components() -> None:
    core = make_core()
    place(core, 0, x=-0.5)
    place(core, 1, x=0.5)
    first = step_same(core, LIGHT, IDLE)
    second = step_same(core, IDLE, IDLE)
    assert core.state.hp[0, 1] == R.HP_MAX  # still in startup (2 frames)
    assert first.components["damage_dealt"][0, 0] == 0.0
    assert second.obs[0, 1, 32 + Obs.STARTUP_LEFT] > 0  # the victim sees the startup
    hit = step_same(core, IDLE, IDLE)
    assert core.state.hp[0, 1] == pytest.approx(R.HP_MAX - 5.0)
    assert hit.components["damage_dealt"][0, 0] == pytest.approx(0.05)
    assert hit.components["damage_taken"][0, 1] == pytest.approx(-0.05)
    assert core.state.mode[0, 1] == Mode.HITSTUN
    step_same(core, IDLE, IDLE)
    assert core.state.hp[0, 1] == pytest.approx(R.HP_MAX - 5.0)  # one hit per attack


def test_out_of_range_attack_misses() -> None:
    core = make_core()
    place(core, 0, x=-1.5)
    place(core, 1, x=1.5)
    step_same(core, HEAVY, IDLE, times=10)
    assert core.state.hp[0, 1] == R.HP_MAX


def test_simultaneous_attacks_trade() -> None:
    core = make_core()
    place(core, 0, x=-0.5)
    place(core, 1, x=0.5)
    step_same(core, LIGHT, LIGHT, times=3)
    np.testing.assert_allclose(core.state.hp[0], [95.0, 95.0])


def test_block_takes_chip_damage_and_drains_shield() -> None:
    core = make_core()
    place(core, 0, x=-0.5)
    place(core, 1, x=0.5)
    step_same(core, HEAVY, Action.BLOCK)
    step_same(core, IDLE, Action.BLOCK, times=5)
    assert core.state.hp[0, 1] == pytest.approx(R.HP_MAX - 14.0 * R.CHIP_FRACTION)
    assert core.state.mode[0, 1] == Mode.BLOCK
    assert core.state.shield[0, 1] < 1.0 - 14.0 * R.SHIELD_COST_PER_DAMAGE


def test_grab_goes_through_block() -> None:
    core = make_core()
    place(core, 0, x=-0.5)
    place(core, 1, x=0.5)
    step_same(core, Action.GRAB, Action.BLOCK, times=3)
    assert core.state.hp[0, 1] == pytest.approx(R.HP_MAX - 8.0)
    assert core.state.mode[0, 1] == Mode.HITSTUN


def test_block_from_behind_does_not_protect() -> None:
    core = make_core()
    place(core, 0, x=-0.5)
    place(core, 1, x=0.5, facing=1.0)  # blocking away from the attacker
    core.step(np.array([[LIGHT, Action.BLOCK]]))
    step_same(core, IDLE, Action.BLOCK, times=2)
    assert core.state.mode[0, 1] == Mode.HITSTUN
    assert core.state.hp[0, 1] == pytest.approx(R.HP_MAX - 5.0)


def test_empty_shield_breaks_into_stun() -> None:
    core = make_core()
    core.state.shield[0, 1] = 0.02
    step_same(core, IDLE, Action.BLOCK, times=3)
    assert core.state.mode[0, 1] == Mode.STUNNED
    step_same(core, IDLE, Action.JUMP)
    assert core.state.on_ground[0, 1]  # stunned players cannot act


def test_knockback_grows_as_hp_drops() -> None:
    core = make_core(2)
    for game, hp in ((0, 100.0), (1, 30.0)):
        place(core, 0, x=-0.5, game=game)
        place(core, 1, x=0.5, game=game, hp=hp)
    step_same(core, HEAVY, IDLE, times=6)
    speed = np.hypot(core.state.vx[:, 1], core.state.vy[:, 1])
    assert (core.state.mode[:, 1] == Mode.HITSTUN).all()
    assert core.state.vx[0, 1] > 0  # launched away from the attacker
    assert speed[1] > 1.5 * speed[0]


def test_blast_zone_knockout_respawns_and_rewards() -> None:
    core = make_core()
    place(core, 1, x=R.BLAST_X - 0.1, y=2.0, vx=0.5)
    result = step_same(core, IDLE, IDLE)
    s = core.state
    assert s.stocks[0].tolist() == [3, 2]
    assert s.x[0, 1] == pytest.approx(R.SPAWN_X) and s.hp[0, 1] == R.HP_MAX
    assert s.invuln[0, 1] == R.RESPAWN_INVULN
    assert result.components["knockout"][0].tolist() == [1.0, -1.0]
    assert not result.terminated[0]


def test_zero_hp_is_a_knockout() -> None:
    core = make_core()
    place(core, 0, x=-0.5)
    place(core, 1, x=0.5, hp=3.0)
    step_same(core, LIGHT, IDLE, times=3)
    assert core.state.stocks[0, 1] == 2


def test_last_stock_ends_the_game_and_finished_games_stay_frozen() -> None:
    core = make_core(stocks=1)
    place(core, 1, x=0.0, y=R.BLAST_BOTTOM + 0.1, vy=-0.5)
    result = step_same(core, IDLE, IDLE)
    assert result.terminated[0] and not (result.truncated[0] or result.timed_out[0])
    assert result.winner[0] == 0
    assert result.components["win_loss"][0].tolist() == [1.0, -1.0]
    weights = np.array([DEFAULT_REWARD_WEIGHTS[name] for name in REWARD_COMPONENTS])
    parts = np.stack([result.components[name][0] for name in REWARD_COMPONENTS])
    np.testing.assert_allclose(result.rewards[0], weights @ parts, rtol=1e-6)
    after = step_same(core, Action.RIGHT, Action.JUMP, times=3)
    assert after.terminated[0] and after.winner[0] == 0
    assert np.array_equal(after.obs, result.obs)
    assert np.all(after.rewards == 0.0)


@pytest.mark.parametrize("truncate", [False, True])
def test_time_limit_ends_the_game_and_decides_by_hp(truncate: bool) -> None:
    core = make_core(max_steps=5, truncate_on_timeout=truncate)
    core.state.hp[0, 1] = 50.0
    before = step_same(core, IDLE, IDLE, times=4)
    assert not (before.terminated[0] or before.truncated[0] or before.timed_out[0])
    result = step_same(core, IDLE, IDLE)
    assert result.timed_out[0]
    assert (result.truncated[0], result.terminated[0]) == (truncate, not truncate)
    assert result.winner[0] == 0
    assert result.components["win_loss"][0].tolist() == [1.0, -1.0]


def test_auto_reset_restarts_only_finished_games() -> None:
    core = make_core(2, stocks=1, auto_reset=True)
    place(core, 1, x=0.0, y=R.BLAST_BOTTOM + 0.1, vy=-0.5, game=0)
    result = step_same(core, IDLE, IDLE)
    assert result.terminated.tolist() == [True, False]
    assert result.final_obs is not None
    assert result.final_obs[0, 0, 32 + Obs.STOCKS] == 0.0
    assert result.obs[0, 0, 32 + Obs.STOCKS] == 1.0
    assert result.obs[0, 0, Obs.TIME_LEFT] == 1.0
    assert core.state.t.tolist() == [0, 1]
    assert not core.state.done.any()


def test_reward_weights_are_configurable() -> None:
    weights = {"win_loss": 0.0, "time_penalty": 2.0}
    core = make_core(reward_weights=weights)
    result = step_same(core, IDLE, IDLE)
    assert result.components["time_penalty"][0].tolist() == [-1.0, -1.0]
    assert result.rewards[0].tolist() == [-2.0, -2.0]


def test_jump_platform_landing_and_drop_through() -> None:
    core = make_core()
    place(core, 0, x=3.0, y=4.0)
    step_same(core, IDLE, IDLE, times=12)
    assert core.state.y[0, 0] == R.PLATFORM_Y and core.state.on_ground[0, 0]
    assert core.observe()[0, 0, Obs.ON_PLATFORM] == 1.0
    step_same(core, Action.DOWN, IDLE, times=6)
    assert core.state.y[0, 0] < R.PLATFORM_Y
    place(core, 0, x=-2.0)
    step_same(core, Action.JUMP, IDLE)
    assert core.state.y[0, 0] > 0 and core.state.jumps[0, 0] == R.MAX_JUMPS - 1


def test_walking_off_the_ledge_keeps_only_the_air_jump() -> None:
    core = make_core()
    place(core, 0, x=-R.STAGE_HALF_WIDTH + 0.1)
    step_same(core, Action.LEFT, IDLE, times=2)
    assert not core.state.on_ground[0, 0]
    assert core.state.jumps[0, 0] == R.MAX_JUMPS - 1


def test_ledge_is_grabbed_from_below() -> None:
    core = make_core()
    place(core, 0, x=-R.STAGE_HALF_WIDTH - 0.5, y=-0.5, vy=-0.1, facing=-1.0)
    step_same(core, IDLE, IDLE)
    assert not core.state.on_ground[0, 0]  # facing away from the stage: no grab
    place(core, 0, x=-R.STAGE_HALF_WIDTH - 0.5, y=-0.5, vy=-0.1, facing=1.0)
    step_same(core, IDLE, IDLE)
    assert core.state.on_ground[0, 0] and core.state.y[0, 0] == 0.0
    assert core.state.x[0, 0] == pytest.approx(-R.STAGE_HALF_WIDTH + R.LEDGE_CLIMB_INSET)


def test_random_play_keeps_observations_bounded() -> None:
    core = DuelCore(128, seed=3, auto_reset=True)
    rng = np.random.default_rng(3)
    finished = 0
    for _ in range(400):
        result = core.step(rng.integers(0, NUM_ACTIONS, size=(128, 2)))
        finished += int((result.terminated | result.truncated).sum())
        assert np.isfinite(result.obs).all()
        assert np.abs(result.obs).max() <= OBS_BOUND
    assert finished > 0


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"max_step": 10}, "did you mean 'max_steps'"),
        ({"reward_weights": {"win_los": 1.0}}, "did you mean 'win_loss'"),
        ({"stocks": 0}, "stocks"),
        ({"zone_closes_at": 1.5}, "zone_closes_at"),
    ],
)
def test_bad_config_is_a_user_error(kwargs: dict, needle: str) -> None:
    with pytest.raises(UserError, match=needle):
        DuelCore(1, **kwargs)


def test_bad_actions_are_rejected() -> None:
    core = make_core(2)
    with pytest.raises(ValueError, match="shape"):
        core.step(np.zeros((1, 2), np.int64))
    with pytest.raises(ValueError, match=r"\[0, 9\]"):
        core.step(np.full((2, 2), NUM_ACTIONS))


@pytest.mark.parametrize(("draw_is_loss", "expected"), [(True, [-1.0, -1.0]), (False, [0.0, 0.0])])
def test_a_level_time_out_is_a_loss_for_both_by_default(draw_is_loss, expected) -> None:
    core = make_core(max_steps=3, draw_is_loss=draw_is_loss)
    result = step_same(core, IDLE, IDLE, times=3)
    assert result.timed_out[0] and result.winner[0] == DRAW  # the result itself stays a draw
    assert result.components["win_loss"][0].tolist() == expected


def test_without_the_zone_idle_players_time_out_at_full_stocks() -> None:
    core = make_core(max_steps=100, zone_closes_at=1.0)
    result = step_same(core, IDLE, IDLE, times=100)
    assert result.timed_out[0] and core.state.stocks[0].tolist() == [3, 3]


def test_the_closing_zone_knocks_out_players_who_keep_their_distance() -> None:
    # The side blast lines close from 13 to ZONE_END_X over the second half of 100 frames;
    # idle players at +-SPAWN_X fall outside once the line passes 3.0, lose a stock together
    # and respawn inside the zone.
    core = make_core(max_steps=100, zone_closes_at=0.5)
    passes_spawn = 50 + int(np.ceil(50 * (R.BLAST_X - R.SPAWN_X) / (R.BLAST_X - R.ZONE_END_X)))
    before = step_same(core, IDLE, IDLE, times=passes_spawn - 1)
    assert core.state.stocks[0].tolist() == [3, 3] and not before.timed_out[0]
    step_same(core, IDLE, IDLE, times=2)
    s = core.state
    assert s.stocks[0].tolist() == [2, 2]
    assert np.all(np.abs(s.x[0]) < R.SPAWN_X)  # respawned inside the zone, not on its line
    step_same(core, IDLE, IDLE, times=100 - s.t[0])
    assert s.done[0] and s.t[0] < 100  # ended by knockouts before the clock (frozen since)
    assert s.stocks[0].tolist() == [0, 0] and s.winner[0] == DRAW  # out together: level


def test_the_zone_line_is_linear_in_the_frame_and_fixed_before_it_closes() -> None:
    core = make_core(2, max_steps=100, zone_closes_at=0.5)
    core.state.t[:] = [50, 75]
    np.testing.assert_allclose(
        core.zone_x()[:, 0], [R.BLAST_X, (R.BLAST_X + R.ZONE_END_X) / 2], rtol=1e-6
    )
    assert make_core(max_steps=100, zone_closes_at=1.0).zone_x() == R.BLAST_X


def test_match_results_count_the_games_that_ended_on_the_clock() -> None:
    idle = act_constant
    fixed = run_matches(idle, idle, num_games=4, seed=0, max_steps=60, zone_closes_at=1.0)
    assert (fixed.timed_out, fixed.draws) == (4, 4)
    closing = run_matches(idle, idle, num_games=4, seed=0, max_steps=60, zone_closes_at=0.0)
    assert closing.timed_out == 0 and closing.mean_length < 60  # the line knocked them out


def test_the_catalog_lists_every_duel_setting() -> None:
    # env.kwargs are checked against the catalog's list before the env is built, so a
    # DuelConfig field missing there could never be set from a spec.
    listed = set(PLATFORM_ENVS["rlp/Duel-v0"].kwargs or ())
    assert listed == {f.name for f in fields(DuelConfig)} | {"render_mode"}


def test_each_player_sees_its_own_private_draw_and_never_the_opponents() -> None:
    core = make_core(256, auto_reset=True, max_steps=20)
    first = core.observe()
    draws = first[:, :, Obs.PRIVATE_DRAW]
    assert np.array_equal(draws, core.state.draw)
    assert draws.min() >= 0.0 and draws.max() < 1.0 and draws.std() > 0.2
    assert not first[:, :, HALF_SIZE + Obs.PRIVATE_DRAW].any()
    rng = np.random.default_rng(0)
    for _ in range(19):  # the draw holds for the whole game
        obs = core.step(rng.integers(0, NUM_ACTIONS, size=(256, 2))).obs
        assert np.array_equal(obs[:, :, Obs.PRIVATE_DRAW], draws)
        assert not obs[:, :, HALF_SIZE + Obs.PRIVATE_DRAW].any()
    after_reset = core.step(np.zeros((256, 2), np.int64)).obs
    assert not np.array_equal(after_reset[:, :, Obs.PRIVATE_DRAW], draws)  # new games, new draws


def test_private_draws_leave_the_spawn_positions_of_a_seed_unchanged() -> None:
    """The draws come from their own stream: seeded games start where they always did."""
    core = make_core(8, seed=5, spawn_jitter=0.5)
    jitter = np.random.default_rng(5).uniform(-0.5, 0.5, size=(8, 2)).astype(np.float32)
    np.testing.assert_allclose(core.state.x, np.array([-R.SPAWN_X, R.SPAWN_X]) + jitter, atol=1e-6)
