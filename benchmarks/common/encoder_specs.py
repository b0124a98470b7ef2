"""The runs `benchmarks/opponent_encoder_value.py` trains: the three models at the CPU size, each
with its tuned training settings, the shared BC kickstart, and a league of scripted styles
(both test sets of `benchmarks/common/hidden_intent.py`, `counter`'s giveaways hidden from the
learner by `env.hide`).

    from benchmarks.common.encoder_specs import MODELS, spec_for
"""

from collections.abc import Sequence
from typing import Any

from benchmarks.common.hidden_intent import GIVEAWAYS, HIDDEN_INTENT, OPEN_STYLES
from rl_platform.spec import ExperimentSpec, validate_spec_data

STYLES = (*OPEN_STYLES, *HIDDEN_INTENT)
"""The league's scripted opponents: both test sets, in equal shares."""
KICKSTART_TEACHER = "scripted://duel/answerer"
"""Answers every open style from the frame (docs/duel.md), so every model starts with them."""
LR_DECAY_ENV_STEPS = 2_000_000
TORCH_THREADS = 2
"""Each run's torch threads, and the CPUs a `--parallel` job reserves: the array runner samples
in the run's own process (no env runner actors), so a run is one process."""
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


def kickstart(env_steps: int, *, teacher: str = KICKSTART_TEACHER) -> dict[str, Any]:
    """docs/bc.md's BC+PPO kickstart, the one of experiments/duel_selfplay.yaml: for the
    first `env_steps`, `teacher` plays half of main's games and main imitates it in all of them,
    the weight falling from 1 to 0; plain PPO afterwards. Every model gets the same one."""
    phase = {
        "teacher": teacher,
        "teacher_led": 0.5,
        "student_led": 0.5,
        "coef": 1.0,
        "env_steps": env_steps,
        "schedule": {"kind": "linear", "until_env_steps": env_steps, "coef": 0.0,
                     "teacher_led": 0.0},
    }  # fmt: skip
    return {"phases": [phase, {}]}


def _league_block(styles: Sequence[str], *, mix_pfsp: float) -> dict[str, Any]:
    """The scripted styles as the league's opponents, in equal shares (PFSP: `mix_pfsp`)."""
    return {
        "opponent_mix": dict.fromkeys(styles, 1.0),
        "scripted": list(styles),
        "mix_pfsp": mix_pfsp,
        # PFSP reads these windows; 100 games per style span ~600k env steps here, too slow to
        # follow a policy that moves within 2M. Without PFSP (and with no snapshots) they only
        # feed the `league/win_rate/` metrics.
        "win_rate_window": 50,
        "slots": 1,
    }


def model_spec_for(
    model: str,
    *,
    history: int | None = None,
    history_of: str = "opponent",
    opponent_action: float = 0.0,
    opponent_action_input: str = "features",
) -> dict[str, Any]:
    """`MODELS[model]`, and for (c): `history`, its history length if not `MODELS`'s;
    `history_of`, what each history frame holds, the opponent's half of the observation or
    the whole frame (both players, so an exchange's attack and its answer sit in one token);
    `opponent_action`, the weight of the policy-inference loss (docs/modules.md), and
    `opponent_action_input`, what its head reads."""
    model_spec = dict(MODELS[model])
    if "history" in model_spec:
        model_spec["history"] = history or model_spec["history"]
        model_spec["opponent_action"] = opponent_action
        model_spec["opponent_action_input"] = opponent_action_input
        if history_of == "frame":
            model_spec["obs_split"] = {"self": [0, 64], "opponent": [0, 64]}
    return model_spec


def spec_for(
    model: str,
    *,
    env_steps: int,
    seed: int,
    kickstart_env_steps: int,
    styles: Sequence[str] = STYLES,
    hide: Sequence[str] = GIVEAWAYS,
    teacher: str = KICKSTART_TEACHER,
    mix_pfsp: float = 0.0,
    **model_options: Any,
) -> ExperimentSpec:
    """`styles`: the league's scripted opponents, in equal shares (`mix_pfsp`: the share of
    their games PFSP hands out by main's results, docs/league.md); `hide`: the features the
    learner does not see (`env.hide`: `counter`'s giveaways); `teacher`: the kickstart's;
    `model_options`: `model_spec_for`'s."""
    bc = {"bc": kickstart(kickstart_env_steps, teacher=teacher)} if kickstart_env_steps else {}
    env = {"id": "rlp/Duel-v0", "envs_per_runner": 64, "runner": "vector", "hide": list(hide)}
    return validate_spec_data(
        {
            "name": f"encoder_value_{model}",
            "algo": "PPO",
            "seed": seed,
            "env": env,
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
            "model": model_spec_for(model, **model_options),
            "league": _league_block(styles, mix_pfsp=mix_pfsp),
            "resources": {"torch_threads": TORCH_THREADS},
            "stop": {"env_steps": env_steps},
            "checkpoint": {"every_iterations": None, "keep_last": 1},
            "logging": {"wandb": "off", "tensorboard": False},
            **bc,
        }
    )
