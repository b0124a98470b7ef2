"""The reference recipe judged at its size (issue #56): its win rates against every scripted duel
style, and what its opponent history is worth, game by game.

    uv run python -m benchmarks.recipe_report POLICY [--games 200] [--seed 0]
        [--styles based rusher blocker zoner counter constant] [--no-cut] [--json OUT]

POLICY is a policy URI of a duel policy: `checkpoint://RUN[/iter_N]` or
`policy://FILE.safetensors` (an `rlp export`). For each mode (greedy, sampled) and style it
plays `--games` games in the duel's vectorized arena under the policy's own game settings (its
spec's `env.kwargs`: the recipe's closing zone), seats alternating, every game to its end
(`rlp eval POLICY --env duel --opponent scripted://duel/STYLE --seat alternate -n GAMES
[--sample] --seed SEED` plays the same games), and prints the win rate with a 95% bootstrap
interval over games. A policy that reads the opponent's history (transformer_lstm) plays the
same games again with its history cut, (c0) of `benchmarks/opponent_encoder_value.py`: the
streaming encoder's key/value cache cleared after every step, the LSTM kept. The history's worth
per style is intact minus cut, with a paired bootstrap interval over the games (game i of both
runs has the same seed, seat and opponent), and its mean over the styles.

`--seed` defaults to `rlp eval`'s, 0: game seeds are not a setting anything was chosen on.
"""

import argparse
import functools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import machine_line, write_json
from benchmarks.common.arena import duel_context, duel_policy
from benchmarks.common.style_arena import CUTS, HISTORY_CUT, ForgetfulPolicy
from rl_platform.evaluation.arena_games import arena_episodes, game_settings
from rl_platform.policies import learned_parts, learned_policy

MODES = ("greedy", "sampled")
STYLES = ("based", "rusher", "blocker", "zoner", "counter", "constant")
RESAMPLES = 10_000


def build_policy(uri: str, *, sample: bool, forgets: tuple[str, ...] | None) -> Any:
    spec, weights, observation_filter = learned_parts(uri)
    policy_class = None if forgets is None else functools.partial(ForgetfulPolicy, forgets=forgets)
    return learned_policy(
        spec,
        weights,
        env=duel_context(),
        sample=sample,
        label=uri,
        policy_class=policy_class,
        observation_filter=observation_filter,
    )


def wins_per_game(
    policy: Any, style: str, *, games: int, seed: int, env_kwargs: dict[str, Any]
) -> np.ndarray:
    """1.0 for each game `policy` won against `style`, else 0.0, in `rlp eval`'s game order."""
    opponent = duel_policy(f"scripted://duel/{style}")
    records = arena_episodes(
        {"policy": policy, "opponent": opponent},
        episodes=games,
        seat="alternate",
        seed=seed,
        env_kwargs=env_kwargs,
    )
    outcomes = []
    for record in records:
        agent = next(a for a, key in record.seats.items() if key == "policy")
        outcomes.append(1.0 if record.outcomes.get(agent) == "win" else 0.0)
    return np.asarray(outcomes)


def interval(per_game: np.ndarray, *, seed: int = 0) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of the mean over games (rows of `per_game`; for a
    [games, styles] array the mean over both, games resampled together: paired)."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(len(per_game), size=(RESAMPLES, len(per_game)))
    means = per_game[rows].reshape(RESAMPLES, -1).mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def cell(per_game: np.ndarray) -> dict[str, Any]:
    low, high = interval(per_game)
    return {"mean": float(per_game.mean()), "ci95": [low, high], "games": int(per_game.size)}


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    spec, _, _ = learned_parts(args.policy)
    cut = None if args.no_cut else CUTS.get(spec.model.type, {}).get(HISTORY_CUT)
    settings = game_settings(spec.env.kwargs)
    result: dict[str, Any] = {"policy": args.policy, "games": args.games, "seed": args.seed}
    result["game_settings"] = settings
    for mode in MODES:
        rows: dict[str, dict[str, np.ndarray]] = {"intact": {}, "cut": {}}
        for arm, forgets in (("intact", None), ("cut", cut)):
            if arm == "cut" and cut is None:
                continue
            policy = build_policy(args.policy, sample=mode == "sampled", forgets=forgets)
            for style in args.styles:
                rows[arm][style] = wins_per_game(
                    policy, style, games=args.games, seed=args.seed, env_kwargs=settings
                )
                print(f"{mode} {arm} vs {style}: {rows[arm][style].mean():.3f}", flush=True)
        result[mode] = summarize(rows, args.styles)
    return result


def summarize(rows: dict[str, dict[str, np.ndarray]], styles: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"win_rate": {s: cell(rows["intact"][s]) for s in styles}}
    out["win_rate"]["mean"] = cell(np.stack([rows["intact"][s] for s in styles], axis=1))
    if rows["cut"]:
        out["history_cut"] = {s: cell(rows["cut"][s]) for s in styles}
        worth = {s: rows["intact"][s] - rows["cut"][s] for s in styles}
        out["history_worth"] = {s: cell(worth[s]) for s in styles}
        out["history_worth"]["mean"] = cell(np.stack([worth[s] for s in styles], axis=1))
    return out


def print_tables(result: dict[str, Any], styles: list[str]) -> None:
    def text(entry: dict[str, Any]) -> str:
        low, high = entry["ci95"]
        return f"{entry['mean']:+.2f} [{low:+.2f}, {high:+.2f}]".replace("+", "", 3)

    columns = [*styles, "mean"]
    print(f"\n{result['policy']}: {result['games']} games per cell, seats alternating, seed "
          f"{result['seed']}; cell: mean [95% bootstrap interval over games]")  # fmt: skip
    print("| row | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for mode in MODES:
        for key, label in (("win_rate", "win rate"), ("history_cut", "win rate, history cut"),
                           ("history_worth", "history worth (intact - cut)")):  # fmt: skip
            if key in result[mode]:
                cells = [
                    text(result[mode][key][c]) if c in result[mode][key] else "" for c in columns
                ]
                print(f"| {mode} {label} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy", help="checkpoint://RUN or policy://FILE.safetensors")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--styles", nargs="+", default=list(STYLES))
    parser.add_argument("--no-cut", action="store_true", help="skip the history-cut games")
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    args = parser.parse_args()
    print(machine_line())
    started = time.perf_counter()
    result = evaluate(args)
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print_tables(result, args.styles)
    print(f"\nwall {result['wall_s']:.0f} s")
    if args.json is not None:
        write_json(args.json, result)
        print(f"results: {args.json}")
    else:
        print(json.dumps({m: result[m]["win_rate"]["mean"] for m in MODES}))


if __name__ == "__main__":
    main()
