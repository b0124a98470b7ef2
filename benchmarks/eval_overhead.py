"""Evaluation during training on the duel: the vectorized arena vs the per-episode rollout.

    uv run python -m benchmarks.eval_overhead [--games 32] [--repeats 3]

Builds `experiments/duel_vs_based.yaml`'s model with fresh weights seeded by `--seed` (no Ray
session; the module is built on CPU as for `rlp eval`) and times `PeriodicEvaluation.run`
(rl_platform/run/periodic_eval.py) for `--games` greedy games against `based`, twice per
repeat, side by side (`benchmarks.common.side_by_side`):

* arena: the default for the duel; all games in one `DuelCore`, one batched forward per step;
* rollout: the same games through `rlp eval`'s rollout (forced by setting `max_steps` to the
  duel's own 1200-frame limit, so the games are as long).

Prints seconds per evaluation (median, min, max over repeats) and the rollout/arena ratio, and
the env steps of training one evaluated game costs at `--train-steps-per-s` (measure that with
the `perf/env_steps_per_s` of a run on the same machine; 8,600 on the 2-core container).
"""

import argparse
import functools
import statistics

import numpy as np
import torch

from benchmarks.common import EXPERIMENTS, machine_line, side_by_side
from rl_platform.policies.rebuild import build_module
from rl_platform.rllib.facts import run_facts
from rl_platform.run.periodic_eval import PeriodicEvaluation
from rl_platform.spec import load_spec

SPEC = EXPERIMENTS / "duel_vs_based.yaml"


def _evaluation(games: int, *, rollout: bool) -> PeriodicEvaluation:
    evaluation = {
        "every_env_steps": 1,
        "episodes": games,
        "parallel": games,
        "opponents": ["based"],
        "modes": ["greedy"],
    }
    if rollout:
        evaluation["max_steps"] = 1200
    spec = load_spec(SPEC, overrides=[f"evaluation={evaluation}".replace("'", "")])
    return PeriodicEvaluation(spec, facts=run_facts(spec), start_env_steps=0)


def _fresh_weights(evaluation: PeriodicEvaluation, seed: int) -> dict:
    torch.manual_seed(seed)  # the same initial policy, so the same games, in every run
    observation_space, action_space = evaluation.shape.spaces[evaluation.shape.agent_ids[0]]
    rebuilt = build_module(
        evaluation.spec,
        observation_space=observation_space,
        action_space=action_space,
        weights=None,
    )
    state = rebuilt.module.get_state()
    return {"main": {k: np.asarray(v) for k, v in state.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--train-steps-per-s", type=float, default=8600.0)
    parser.add_argument("--seed", type=int, default=0, help="Seed of the fresh weights.")
    args = parser.parse_args()
    paths = {"arena": _evaluation(args.games, rollout=False)}
    paths["rollout"] = _evaluation(args.games, rollout=True)
    weights = _fresh_weights(paths["arena"], args.seed)
    contenders = {
        name: functools.partial(evaluation.run, weights, env_steps=0)
        for name, evaluation in paths.items()
    }
    seconds = side_by_side(contenders, repeats=args.repeats)
    print(machine_line())
    for name, values in seconds.items():
        median = statistics.median(values)
        per_game = median / args.games
        print(
            f"{name:8s} {median:6.2f} s per evaluation (min {min(values):.2f}, max "
            f"{max(values):.2f}); {per_game * 1000:.0f} ms per game = "
            f"{per_game * args.train_steps_per_s:.0f} env steps of training"
        )
    ratio = statistics.median(seconds["rollout"]) / statistics.median(seconds["arena"])
    print(f"rollout / arena: {ratio:.1f}x")


if __name__ == "__main__":
    main()
