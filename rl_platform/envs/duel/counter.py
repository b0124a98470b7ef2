"""`counter`: the duel style whose best response only its history shows, and its probes.

`counter` holds the centre, waits, and answers every attack with its counter except one: per
game it has a blind spot (light, heavy or grab), picked by its private draw
(`Obs.PRIVATE_DRAW`, which only its own half of the observation shows). Every frame before an
exchange looks the same whatever the blind spot, so a policy that reads only the current frame
can at best guess; one that remembers which attack worked, or how `counter` answered, wins.

`make_opener(attack)` is the probe: it walks up and always opens with the same attack.
`wins_by_blind_spot` measures any agent against `counter`, split by the blind spot of each game
(docs/duel.md, "`counter`: a style only its history shows").
"""

from collections.abc import Callable

import numpy as np

from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.actions import Action
from rl_platform.envs.duel.arena import wins_by_hidden_value
from rl_platform.envs.duel.observation import VELOCITY_SCALE, Obs
from rl_platform.envs.duel.rules import Mode
from rl_platform.envs.duel.scripted import ActFn
from rl_platform.envs.duel.tactics import (
    View,
    in_hit_line,
    on_stage_after,
    op_busy_frames,
    op_threat,
    recover,
)

BLIND_SPOTS = (Mode.LIGHT, Mode.HEAVY, Mode.GRAB)
"""`counter`'s possible blind spots, picked per game by its private draw."""


def counter_blind_spot(obs: np.ndarray) -> np.ndarray:
    """The attack `counter` fails to answer in this game (a `Mode`), from its own observation."""
    draw = obs[:, Obs.PRIVATE_DRAW]
    index = np.minimum((draw * len(BLIND_SPOTS)).astype(np.int64), len(BLIND_SPOTS) - 1)
    return np.asarray(BLIND_SPOTS, np.int64)[index]


def _frames_to_active(v: View) -> np.ndarray:
    """Frames until the opponent's attack turns active, as observed (0 outside startup)."""
    return v.op[:, Obs.STARTUP_LEFT] * R.MAX_PHASE_FRAMES


def _incoming(v: View, adx: np.ndarray, ady: np.ndarray, mode: Mode) -> np.ndarray:
    """The opponent's `mode` attack is coming (startup or active frames), aimed at us, and
    would reach us now or where both players' motion puts us when it turns active."""
    # Hitboxes reach a little behind the attacker too (rules.BACK_REACH).
    aimed = (v.op[:, Obs.FACING] * v.dx < 0) | (adx < R.BACK_REACH + 0.25)
    coming = (v.op[:, Obs.STARTUP_LEFT] > 0) | (v.op[:, Obs.ATTACK_ACTIVE] > 0.5)
    frames = _frames_to_active(v)
    relative_vx = (v.op[:, Obs.VX] - v.me[:, Obs.VX]) * VELOCITY_SCALE
    relative_vy = (v.op[:, Obs.VY] - v.me[:, Obs.VY]) * VELOCITY_SCALE
    # Gravity pulls on whoever is airborne; only the opponent's fall is counted.
    fall = np.where(v.op[:, Obs.ON_GROUND] > 0.5, 0.0, 0.5 * R.GRAVITY * frames * (frames + 1))
    dx_then, dy_then = v.dx + relative_vx * frames, v.dy + relative_vy * frames - fall
    reach, height = R.ATTACK_REACH[mode] + 0.2, R.ATTACK_VERTICAL_REACH[mode] + 0.3
    now = (adx < reach) & (ady < height)
    then = (np.abs(dx_then) < reach) & (np.abs(dy_then) < height)
    return v.op_mode(mode) & coming & aimed & (now | then)


Rule = tuple[np.ndarray, np.ndarray | int]
"""(where it applies `[B]`, the action there); the first rule that applies wins."""


def act_counter(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Holds the centre, waits, and answers every attack with its counter, except one: per game
    it has a hidden blind spot (light, heavy or grab, from its private draw) that it answers
    wrongly. Beaten by the blind spot's attack, which only its history shows: every frame
    before an exchange looks the same in all three kinds of game."""
    v = View.of(obs)
    adx, ady = np.abs(v.dx), np.abs(v.dy)
    recovering, recover_action = recover(v)
    rules: list[Rule] = [
        (recovering, recover_action),
        *_answers(v, adx, ady, counter_blind_spot(obs)),
        *_punishes(v, adx, ady),
        *_positioning(v, adx),
    ]
    conditions, choices = zip(*rules, strict=True)
    return np.select(conditions, choices, Action.IDLE).astype(np.int64)


def _answers(v: View, adx: np.ndarray, ady: np.ndarray, blind: np.ndarray) -> list[Rule]:
    """What it does against an incoming attack: the wrong answer to its blind spot; otherwise
    a light is blocked, a heavy interrupted by a faster light (after a step in from just out
    of light range) or blocked when too late for that, and a grab stepped out of (or jumped
    at a ledge). No attack is free to try: each answer is punished afterwards (`_punishes`)."""
    side = np.sign(v.dx)
    light_in, heavy_in, grab_in = (_incoming(v, adx, ady, m) for m in BLIND_SPOTS)
    shielded = v.grounded & (v.me[:, Obs.SHIELD] > 0.3)
    can_back_off = on_stage_after(v, -side, 0.9)
    away = np.where(side > 0, Action.LEFT, Action.RIGHT)
    # The wrong answers: stand still under a light or a heavy, block a grab.
    misread = (
        (light_in & (blind == Mode.LIGHT))
        | (heavy_in & (blind == Mode.HEAVY))
        | (grab_in & (blind == Mode.GRAB))
    )
    # A block only stops a hit from the side it faces. Crossed up (facing away from an
    # attacker on top of it) turning would walk through the attacker, so it steps behind the
    # attacker's back instead, out of the hitbox's 0.3 back reach; farther away it turns.
    strike_in = (light_in | heavy_in) & ~v.facing_opp & v.grounded
    behind = np.where(v.op[:, Obs.FACING] > 0, Action.LEFT, Action.RIGHT)
    light_reaches = (adx < R.ATTACK_REACH[Mode.LIGHT]) & (ady < R.ATTACK_VERTICAL_REACH[Mode.LIGHT])
    # A light chosen now is active on the same frame as an attack with 3 frames left (a
    # trade), first with 4 or more.
    frames_left = _frames_to_active(v)
    step_in = heavy_in & ~light_reaches & (adx < 1.7) & v.facing_opp & (ady < 0.5)
    can_jump = v.grounded & (v.me[:, Obs.JUMPS] > 0) & (v.me[:, Obs.JUMP_COOLDOWN] == 0)
    # Just out of the grab's reach, and no further: the whiff is then punished with a heavy.
    escaping = grab_in & (adx < R.ATTACK_REACH[Mode.GRAB] + 0.25)
    return [
        (misread, np.where(grab_in, Action.BLOCK, Action.IDLE)),
        (strike_in, np.where(adx < 0.6, behind, v.toward)),
        (light_in & shielded, Action.BLOCK),
        (heavy_in & light_reaches & v.facing_opp & (frames_left >= 4), Action.LIGHT),
        (step_in & (frames_left >= 5), v.toward),
        (escaping & can_back_off & (adx > 0.7), away),
        (escaping & can_jump, Action.JUMP),
        (heavy_in & shielded, Action.BLOCK),
        # Out of other answers (shield low, in the air): get away from it.
        ((light_in | heavy_in) & can_back_off, away),
    ]


def _punishes(v: View, adx: np.ndarray, ady: np.ndarray) -> list[Rule]:
    """Attacks into an opponent still busy (recovery, hitstun) long enough for them to land."""
    busy = op_busy_frames(v)
    aim = in_hit_line(v, adx) & (ady < 0.9) & v.grounded
    closes_in = (adx >= 1.3) & (adx < 2.7) & (busy >= 5) & on_stage_after(v, np.sign(v.dx), 0.6)
    # Grab and light fit into a blocked light's 3 recovery frames; the heavy gets a frame of
    # margin, as a heavy that comes a frame late is blocked and punished in turn. A blocked
    # heavy from far out (7 recovery frames) is walked into and punished with a light.
    return [
        (aim & (adx < 1.0) & (ady < 0.5) & (busy >= 3), Action.GRAB),
        (aim & (adx < 1.8) & (busy >= 7), Action.HEAVY),
        (aim & (adx < 1.3) & (busy >= 3), Action.LIGHT),
        (aim & closes_in, v.toward),
    ]


def _positioning(v: View, adx: np.ndarray) -> list[Rule]:
    """Between exchanges: on the main stage, facing the opponent, back at the centre."""
    side = np.sign(v.dx)
    centre = np.where(v.sx > 0, Action.LEFT, Action.RIGHT)
    centre_is_ahead = np.sign(-v.sx) == side
    return [
        # From a platform, attacks from below would reach it unseen.
        (v.me[:, Obs.ON_PLATFORM] > 0.5, Action.DOWN),
        # While an attack is on its way it does not step back into it (turning is a step).
        (op_threat(v) & ~v.op_mode(Mode.GRAB), Action.IDLE),
        (~in_hit_line(v, adx) & (adx < 3.0), v.toward),
        # Back to the centre after every exchange, so that it is never cornered for long.
        (
            (np.abs(v.sx) > 1.0) & ((adx > 2.4) | ((np.abs(v.sx) > 3.5) & centre_is_ahead)),
            centre,
        ),
    ]


OPENING_DISTANCE = {Mode.LIGHT: 1.2, Mode.HEAVY: 1.3, Mode.GRAB: 0.9}
_ATTACK_ACTION = {
    Mode.LIGHT: Action.LIGHT,
    Mode.HEAVY: Action.HEAVY,
    Mode.GRAB: Action.GRAB,
}


def make_opener(attack: Mode) -> ActFn:
    """A probe that walks up to its opponent and always opens with `attack` once in range."""
    action, distance = _ATTACK_ACTION[attack], OPENING_DISTANCE[attack]

    def act_opener(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        v = View.of(obs)
        adx = np.abs(v.dx)
        recovering, recover_action = recover(v)
        free = v.me[:, Obs.MODE_ONE_HOT + Mode.FREE] > 0.5
        in_line = in_hit_line(v, adx)
        opens = in_line & (np.abs(v.dy) < 0.5) & (adx < distance) & free
        conditions = [recovering, opens, ~in_line | (adx >= distance)]
        return np.select(conditions, [recover_action, action, v.toward], Action.IDLE)

    return act_opener


def wins_by_blind_spot(
    make_agent: Callable[[], ActFn], *, games: int, seed: int
) -> dict[Mode, float]:
    """An agent's win rate against `counter` in the games of each blind spot
    (`arena.wins_by_hidden_value`)."""
    return wins_by_hidden_value(
        make_agent, act_counter, counter_blind_spot, BLIND_SPOTS, games=games, seed=seed
    )
