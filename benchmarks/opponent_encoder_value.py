"""Does reading the opponent's history pay? MLP vs LSTM vs transformer_lstm on the duel.

    uv run python benchmarks/opponent_encoder_value.py [--env-steps 6000000] [--games 200]
        [--seeds 0 1 2] [--history 30] [--history-of opponent] [--mix-pfsp 0]
        [--opponent-action 1.0] [--opponent-action-input features] [--quick]
        [--out runs/opponent_encoder_value]

Trains three models with the same env-step budget, on the array runner, in a league whose
opponents are the scripted duel styles in equal shares (`based`, `rusher`, `blocker`,
`zoner`, and `counter`, whose blind spot is hidden per game: docs/duel.md), then plays each
trained policy against each style (`--games` games, seats alternating, greedy and sampled) in
the duel's vectorized arena:

* (a) `mlp` [256, 256]: sees the current frame only;
* (b) `lstm` (cell 128): memory, no opponent-history input;
* (c) `transformer_lstm` with the streaming encoder, CPU-sized (2 layers, 4 heads, d_model 64,
  a 30-frame opponent history, LSTM 128), the whole current frame in its obs path;
  (b) and (c) share the recurrent options: a critic of their own on the observation
  (`critic_input: observation`) and heads that read the LSTM's input beside its output
  (`lstm_skip`), so the memory adds to what the current frame shows;
* (c0) the same (c) policy with its history cut to the current frame: the encoder's key/value
  cache is cleared after every step, the LSTM keeps its state. If (c)'s edge comes from reading
  the opponent's history, (c0) loses it;
* (c00) the same (c) policy with all its memory cut: the cache and the LSTM state are reset
  after every step, so it sees the current frame only. (c0) keeps the LSTM, which reads the
  whole current frame at every step, so it can still remember the opponent; (c00) cannot;
* (b0) the same (b) policy with its memory cut: its LSTM state is reset after every step.

Against `counter` the win rate is also split by its blind spot (`counter_by_blind_spot`): a
policy that reads the history wins in all three kinds of game. Winning in several is no proof
of reading: sampled play tries attacks at random, and the current frame keeps some of the
game's past (both players' HP, shield and stocks), so even a greedy memoryless policy can
switch attacks after being punished (6M MLP: 0.40 / 0.90 / 0.40). Compare with the memory
cuts. `--styles` picks the league mix and the evaluated styles,
`--evaluate-only` re-evaluates the newest trained runs under `--out` with their own
spec.yaml. `--history` sets (c)'s history length (30 frames by default; the reference
trainer's 90 did worse here, docs/modules.md), `--history-of frame` makes each history token
the whole frame instead of the opponent's half, and `--mix-pfsp S` hands a share S of the
styles' games out by PFSP on main's results (`league.mix_pfsp`); both did worse here too.
`--opponent-action W` is (c)'s weight of the loss that infers the opponent's action (`model.
opponent_action`; 1.0 by default, 0 turns it off): with it (c)'s memory read `counter` in
more seeds, and `--opponent-action-input memory` (its head on the LSTM's output too) did
worse in the one seed it ran (docs/modules.md).

The budget is 6M env steps by default, where the baselines have converged: at 2M every
model's mean swung by 30-60 points between seeds, more than the goal, so the comparison
measured where each early learning curve happened to be (docs/modules.md, eighth session).
A seed of all three models takes about 70 minutes on 2 cores.

All three start with the same BC kickstart towards `based` (`--kickstart-env-steps`, 200k by
default; docs/bc.md), then train with PPO at their own learning rate and value-loss weight
(`per_model_training`). Without the kickstart, at lr 3e-4, neither recurrent model learned
anything in 1M env steps (2026-11-25, docs/modules.md): the comparison measured how fast each
starts to learn, not whether history helps.

Prints, per seed, one row per policy: win rate against each style, greedy and sampled, and
the mean over styles. Then, over seeds (median, min, max): (c)'s edge in that mean over the
better of (a) and (b) (goal, issue #20: >= 10 points, on the median) and its edge over (c0)
(the part that comes from reading the history). Results in docs/modules.md and
docs/BENCHMARKS.md. The models are CPU-sized so a 2-core machine can train them; say so when
quoting. `--quick`: one seed, 20k env steps, 20 games (a smoke run, no result).
"""

import argparse
import json
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from spread import add_seed_options, ratio_line, seeds_to_run

from rl_platform import train
from rl_platform.envs.duel.counter import BLIND_SPOTS, wins_by_blind_spot
from rl_platform.envs.duel.scripted import ActFn
from rl_platform.evaluation.arena_games import arena_episodes
from rl_platform.evaluation.envs import EnvTarget, probe_env
from rl_platform.evaluation.summary import summarize
from rl_platform.policies import EnvContext, learned_policy, load_policy
from rl_platform.policies.module_policy import ModulePolicy
from rl_platform.policies.rebuild import build_module, history_converter
from rl_platform.spec import ExperimentSpec, load_spec, validate_spec_data
from rl_platform.storage.algorithm_state import ALGORITHM_PART, module_weights
from rl_platform.storage.checkpoints import load_checkpoint, resolve_checkpoint

STYLES = ("based", "rusher", "blocker", "zoner", "counter")
HISTORY_CUT = "transformer_lstm, history cut"
ALL_MEMORY_CUT = "transformer_lstm, all memory cut"
MEMORY_CUT = "lstm, memory cut"
CUTS: dict[str, dict[str, tuple[str, ...]]] = {
    "transformer_lstm": {HISTORY_CUT: ("kv",), ALL_MEMORY_CUT: ("",)},
    "lstm": {MEMORY_CUT: ("",)},
}
"""Per model, its memory-cut rows and the state entries each resets after every step (name
prefixes; "" is every entry): (c0) forgets the streaming encoder's key/value cache and keeps
its LSTM, (c00) forgets both, so it sees the current frame only; (b0) forgets the LSTM's
state, all the memory (b) has."""
LR_DECAY_ENV_STEPS = 2_000_000
MODELS: dict[str, dict[str, Any]] = {
    "mlp": {"type": "mlp", "hidden": [256, 256]},
    "lstm": {
        "type": "lstm",
        "lstm_cell_size": 128,
        "actor": [64],
        "critic": [256, 256],
        "critic_input": "observation",
        "lstm_skip": True,
    },
    "transformer_lstm": {
        "type": "transformer_lstm",
        "encoder": "streaming",
        # The whole current frame goes through the obs path, as (a) and (b) see it; the
        # encoder reads the opponent's part over time. So (c0) is (c) minus the history only.
        "obs_split": {"self": [0, 64], "opponent": [32, 64]},
        "history": 30,
        "layers": 2,
        "heads": 4,
        "d_model": 64,
        "obs_encoder": [128],
        "lstm_cell_size": 128,
        "actor": [64],
        "critic": [256, 256],
        "critic_input": "observation",
        "lstm_skip": True,
    },
}


# Per model, as tuned on the duel (2026-11-26, docs/modules.md). Learning rate: the MLP and
# the LSTM learn faster at 1e-3 than at 3e-4 (300k-env-step pilots); the transformer at a
# constant 1e-3 learned to ~1M env steps and then fell apart, at 3e-4 it barely left the
# kickstart, so it decays from 1e-3 to 1e-4 over its first 2M env steps and holds 1e-4 after
# (a decay stretched over a 6M budget kept it near 1e-3 for too long: by 3.2M it had lost its
# early training score of 0.57 against `blocker`, down to 0.10-0.24). Value-loss weight 0.5:
# the recurrent models' critics are their own networks (`critic_input: observation`); with
# the critic on the shared trunk, 0.5 scrambled what the policy learned.
def per_model_training(model: str) -> dict[str, Any]:
    if model in ("mlp", "lstm"):
        return {"lr": 1.0e-3, "vf_loss_coeff": 0.5}
    return {"lr_schedule": [[0, 1.0e-3], [LR_DECAY_ENV_STEPS, 1.0e-4]], "vf_loss_coeff": 0.5}


def kickstart(env_steps: int) -> dict[str, Any]:
    """docs/bc.md's BC+PPO kickstart, the one of experiments/duel_selfplay.yaml: for the
    first `env_steps`, `based` plays half of main's games and main imitates it in all of them,
    the weight falling from 1 to 0; plain PPO afterwards. Every model gets the same one."""
    phase = {
        "teacher": "scripted://duel/based",
        "teacher_led": 0.5,
        "student_led": 0.5,
        "coef": 1.0,
        "env_steps": env_steps,
        "schedule": {"kind": "linear", "until_env_steps": env_steps, "coef": 0.0,
                     "teacher_led": 0.0},
    }  # fmt: skip
    return {"phases": [phase, {}]}


def spec_for(
    model: str,
    *,
    env_steps: int,
    seed: int,
    kickstart_env_steps: int,
    styles: Sequence[str] = STYLES,
    history: int | None = None,
    history_of: str = "opponent",
    mix_pfsp: float = 0.0,
    opponent_action: float = 0.0,
    opponent_action_input: str = "features",
) -> ExperimentSpec:
    """`history`: (c)'s history length, if not `MODELS`'s; `history_of`: what each history
    frame holds, the opponent's half of the observation or the whole frame (both players, so
    an exchange's attack and its answer sit in one token); `mix_pfsp`: the share of the
    styles' games PFSP hands out by main's results (docs/league.md), the rest equal;
    `opponent_action`: (c)'s weight of the policy-inference loss (docs/modules.md), and
    `opponent_action_input` what its head reads."""
    model_spec = dict(MODELS[model])
    if "history" in model_spec:
        model_spec["history"] = history or model_spec["history"]
        model_spec["opponent_action"] = opponent_action
        model_spec["opponent_action_input"] = opponent_action_input
        if history_of == "frame":
            model_spec["obs_split"] = {"self": [0, 64], "opponent": [0, 64]}
    bc = {"bc": kickstart(kickstart_env_steps)} if kickstart_env_steps else {}
    return validate_spec_data(
        {
            "name": f"encoder_value_{model}",
            "algo": "PPO",
            "seed": seed,
            "env": {"id": "rlp/Duel-v0", "envs_per_runner": 64, "runner": "vector"},
            "training": {
                **per_model_training(model),
                "gamma": 0.995,
                "lambda": 0.95,
                "train_batch_size": 4096,
                "minibatch_size": 1024,
                "num_epochs": 4,
                # No entropy bonus: the MLP learns more without (0.44 -> 0.68 greedy mean).
                "entropy_coeff": 0.0,
                "grad_clip": 1.0,
            },
            "model": model_spec,
            "league": {
                "opponent_mix": dict.fromkeys(styles, 1.0),
                "scripted": list(styles),
                "mix_pfsp": mix_pfsp,
                # PFSP reads these windows; 100 games per style span ~600k env steps here,
                # too slow to follow a policy that moves within 2M. Without PFSP (and with
                # no snapshots) they only feed the `league/win_rate/` metrics.
                "win_rate_window": 50,
                "slots": 1,
            },
            "resources": {"torch_threads": 2},
            "stop": {"env_steps": env_steps},
            "checkpoint": {"every_iterations": None, "keep_last": 1},
            "logging": {"wandb": "off", "tensorboard": False},
            **bc,
        }
    )


class ForgetfulPolicy(ModulePolicy):
    """A trained recurrent policy that forgets after every step: the state entries whose names
    start with `forgets` go back to their initial value (`CUTS`)."""

    def __init__(self, *args: Any, forgets: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.forgets = forgets

    def act(self, obs: Any, rng: np.random.Generator, *, keys: Sequence[Hashable]) -> np.ndarray:
        actions = super().act(obs, rng, keys=keys)
        for key in keys:
            state = self._states[key]
            for name in state:
                if name.startswith(self.forgets):
                    state[name] = np.asarray(self._initial[name])
        return actions


def trained_policy(
    spec: ExperimentSpec, run_dir: Path, *, sample: bool, forgets: tuple[str, ...] | None
) -> Any:
    """The trained `main` policy; with `forgets`, its memory-cut twin (`CUTS`)."""
    loaded = load_checkpoint(resolve_checkpoint(run_dir))
    weights = module_weights(loaded.parts[ALGORITHM_PART])["main"]
    target = EnvTarget(spec.env.id)
    observation_space, action_space = probe_env(target).spaces["player_0"]
    context = EnvContext(spec.env.id, observation_space, action_space)
    if forgets is None:
        return learned_policy(spec, weights, env=context, sample=sample, label=spec.name), context
    converter = history_converter(spec, observation_space)
    rebuilt = build_module(
        spec,
        observation_space=converter.observation_space if converter else observation_space,
        action_space=action_space,
        weights=weights,
        inference_only=True,
    )
    policy = ForgetfulPolicy(
        spec.name, rebuilt, sample=sample, converter=converter, forgets=forgets
    )
    return policy, context


def win_rate(policy: Any, opponent: Any, *, games: int, seed: int) -> float:
    """Seats alternating, in the duel's arena (as `rlp eval --seat alternate` plays it)."""
    records = arena_episodes(
        {"policy": policy, "opponent": opponent},
        episodes=games,
        seat="alternate",
        seed=seed,
        env_kwargs={},
    )
    return float(summarize(records, "policy")["win_rate"])


def evaluate(
    spec: ExperimentSpec,
    run_dir: Path,
    *,
    games: int,
    forgets: tuple[str, ...] | None,
    styles: Sequence[str],
) -> dict:
    row: dict[str, float] = {}
    for mode in ("greedy", "sampled"):
        policy, context = trained_policy(spec, run_dir, sample=mode == "sampled", forgets=forgets)
        rates = []
        for style in styles:
            opponent = load_policy(f"scripted://duel/{style}", env=context)
            rates.append(win_rate(policy, opponent, games=games, seed=spec.seed or 0))
            row[f"{mode}/{style}"] = rates[-1]
        row[f"{mode}/mean"] = float(np.mean(rates))
        if "counter" in styles:
            row |= counter_by_blind_spot(spec, run_dir, games=games, forgets=forgets, mode=mode)
    return row


def counter_by_blind_spot(
    spec: ExperimentSpec,
    run_dir: Path,
    *,
    games: int,
    forgets: tuple[str, ...] | None,
    mode: str,
) -> dict[str, float]:
    """The win rate against `counter` in the games of each of its blind spots (`games` games
    in all, half from each seat). A policy that reads `counter`'s history wins in all three
    kinds of game; so can others, partly (sampled play tries attacks at random, and the frame
    keeps the HP a punished attack cost), so compare with the memory-cut rows."""

    def fresh_policy() -> ActFn:  # recurrent state and history per game row, from scratch
        policy, _ = trained_policy(spec, run_dir, sample=mode == "sampled", forgets=forgets)
        return lambda obs, rng: policy.act(obs, rng, keys=range(len(obs)))

    wins = wins_by_blind_spot(fresh_policy, games=games // 2, seed=spec.seed or 0)
    return {f"{mode}/counter/{spot.name.lower()}": rate for spot, rate in wins.items()}


def print_table(rows: dict[str, dict], styles: Sequence[str]) -> None:
    columns = [f"{mode}/{s}" for mode in ("greedy", "sampled") for s in (*styles, "mean")]
    if "counter" in styles:
        spots = [f"counter/{spot.name.lower()}" for spot in BLIND_SPOTS]
        columns += [f"{mode}/{spot}" for mode in ("greedy", "sampled") for spot in spots]
    print("| policy | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row[c]:.2f}" for c in columns) + " |")


def run_seed(seed: int, args: argparse.Namespace, *, env_steps: int, games: int) -> dict:
    rows: dict[str, dict] = {}
    for model in args.models:
        spec = spec_for(
            model,
            env_steps=env_steps,
            seed=seed,
            kickstart_env_steps=args.kickstart_env_steps,
            styles=args.styles,
            history=args.history,
            history_of=args.history_of,
            mix_pfsp=args.mix_pfsp,
            opponent_action=args.opponent_action,
            opponent_action_input=args.opponent_action_input,
        )
        out_dir = args.out / f"seed{seed}"
        if args.evaluate_only:
            run_dir = max((out_dir / spec.name).iterdir())  # the newest run of this model
            spec = load_spec(run_dir / "spec.yaml")  # as it trained (`--history` included)
        else:
            run_dir = train(spec, out_dir=out_dir).run_dir
        rows[model] = evaluate(spec, run_dir, games=games, forgets=None, styles=args.styles)
        for row_name, forgets in CUTS.get(model, {}).items():
            rows[row_name] = evaluate(
                spec, run_dir, games=games, forgets=forgets, styles=args.styles
            )
        print(json.dumps({model: rows[model], "run": str(run_dir)}), flush=True)
    print(f"\n{env_steps:,} env steps per model, {games} games per style and mode, seed {seed}")
    print_table(rows, args.styles)
    return rows


def edges(rows_by_seed: list[dict[str, dict]], mode: str) -> tuple[list, list, list]:
    """Per seed: (c)'s mean win rate minus the better baseline's, minus (c0)'s and minus
    (c00)'s."""
    over_baselines, over_cut, over_all_cut = [], [], []
    for rows in rows_by_seed:
        if "transformer_lstm" not in rows:
            continue
        ours = rows["transformer_lstm"][f"{mode}/mean"]
        baselines = [rows[m][f"{mode}/mean"] for m in ("mlp", "lstm") if m in rows]
        if baselines:
            over_baselines.append(ours - max(baselines))
        over_cut.append(ours - rows[HISTORY_CUT][f"{mode}/mean"])
        if ALL_MEMORY_CUT in rows:  # runs before it existed lack the row
            over_all_cut.append(ours - rows[ALL_MEMORY_CUT][f"{mode}/mean"])
    return over_baselines, over_cut, over_all_cut


def memory_edges(rows_by_seed: list[dict[str, dict]], mode: str) -> list[float]:
    """Per seed: (b)'s mean win rate minus (b0)'s, what the LSTM's memory is worth."""
    return [
        rows["lstm"][f"{mode}/mean"] - rows[MEMORY_CUT][f"{mode}/mean"]
        for rows in rows_by_seed
        if "lstm" in rows
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_seed_options(parser, quick_help=", 20k env steps, 20 games")
    parser.add_argument("--env-steps", type=int, default=6_000_000)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("runs/opponent_encoder_value"))
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument(
        "--styles", nargs="+", default=list(STYLES),
        help="the scripted styles of the league mix (equal shares) and of the evaluation",
    )  # fmt: skip
    parser.add_argument(
        "--evaluate-only", action="store_true",
        help="evaluate the newest run of each model under --out instead of training",
    )  # fmt: skip
    parser.add_argument(
        "--history", type=int, default=MODELS["transformer_lstm"]["history"],
        help="(c)'s opponent-history length in frames (the reference trainer's is 90)",
    )  # fmt: skip
    parser.add_argument(
        "--history-of", choices=("opponent", "frame"), default="opponent",
        help="(c)'s history frames: the opponent's half of the observation or the whole frame",
    )  # fmt: skip
    parser.add_argument(
        "--mix-pfsp", type=float, default=0.0,
        help="share of the styles' games handed out by PFSP on main's results (0: equal fifths)",
    )  # fmt: skip
    parser.add_argument(
        "--opponent-action", type=float, default=1.0,
        help="(c)'s weight of the loss that infers the opponent's action (0: none)",
    )  # fmt: skip
    parser.add_argument(
        "--opponent-action-input", choices=("features", "memory"), default="features",
        help="what that loss's head reads: the LSTM's input, or also its output (memory)",
    )  # fmt: skip
    parser.add_argument(
        "--kickstart-env-steps", type=int, default=200_000,
        help="env steps of the BC kickstart towards `based` (0: none, plain PPO from scratch)",
    )  # fmt: skip
    args = parser.parse_args()
    env_steps, games = (20_000, 20) if args.quick else (args.env_steps, args.games)
    rows_by_seed = []
    for seed in seeds_to_run(args):
        rows_by_seed.append(run_seed(seed, args, env_steps=env_steps, games=games))
        (args.out / "results.json").write_text(json.dumps(rows_by_seed, indent=2) + "\n")
    print()
    for mode in ("greedy", "sampled"):
        over_baselines, over_cut, over_all_cut = edges(rows_by_seed, mode)
        print(
            ratio_line(f"{mode}: (c) - best of (a), (b)", over_baselines, goal=0.10, at_most=False)
        )
        print(ratio_line(f"{mode}: (c) - (c0) history cut", over_cut))
        print(ratio_line(f"{mode}: (c) - (c00) all memory cut", over_all_cut))
        print(ratio_line(f"{mode}: (b) - (b0) memory cut", memory_edges(rows_by_seed, mode)))


if __name__ == "__main__":
    main()
