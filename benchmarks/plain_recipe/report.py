"""Timings per phase, the result dict (what `--json` writes) and its printout."""

import time
from dataclasses import fields
from typing import Any

import numpy as np
import torch

from benchmarks.plain_recipe.config import SPECS, RecipeConfig

PHASES = ("sample_s", "prep_s", "sgd_s")


def clock(device: torch.device) -> float:
    """perf_counter once the device's queued kernels are done: each phase owns its time."""
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter()


def phase_times(times: list[float]) -> dict[str, float]:
    """Seconds per phase from the clock readings at its boundaries."""
    return dict(zip(PHASES, np.diff(times).tolist(), strict=True))


def summarize(history: list[dict[str, float]], *, wall_s: float, config: RecipeConfig) -> dict:
    """Totals over all iterations; rate and split over the steady ones (all but the first,
    which pays for allocation, autotuning, warm caches and, captured, most captures) when
    there are any."""
    total = {key: sum(row[key] for row in history) for key in PHASES}
    steady = {key: sum(row[key] for row in history[1:]) for key in PHASES}
    split = steady if len(history) > 1 else total
    learn_s = split["prep_s"] + split["sgd_s"]
    steps, cuda = config.iterations * config.batch_size, config.device == "cuda"
    return {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "mode": "captured" if config.captured else "eager",
        "env_steps": steps,
        "iterations": config.iterations,
        "wall_s": wall_s,
        **total,
        "learn_s": total["prep_s"] + total["sgd_s"],
        "env_steps_per_s": steps / wall_s,
        "steady_env_steps_per_s": (steps - config.batch_size) / sum(steady.values())
        if len(history) > 1
        else None,
        "first_iteration_s": sum(history[0][key] for key in PHASES),
        "sample_pct": 100 * split["sample_s"] / (split["sample_s"] + learn_s),
        "prep_pct_of_learn": 100 * split["prep_s"] / learn_s,
        "peak_gpu_mem_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
        "first_max_abs_logratio": max(row["first_max_abs_logratio"] for row in history),
        "final": history[-1],
        "history": history,
        "config": {
            "model": config.model.settings,
            "training": config.training.model_dump(by_alias=True),
            "league": config.league.model_dump(mode="json"),
        }
        | {f.name: getattr(config, f.name) for f in fields(config) if f.name not in SPECS},
    }


def print_result(result: dict[str, Any]) -> None:
    config, final, steady = result["config"], result["final"], result["steady_env_steps_per_s"]
    model, sample, prep = config["model"], result["sample_pct"], result["prep_pct_of_learn"]
    print(
        f"plain-torch recipe ({result['mode']}) on {result['device']} ({config['threads']} "
        f"threads), {result['parameters']:,} parameters ({model['layers']} layers, d_model "
        f"{model['d_model']}, LSTM {model['lstm_cell_size']}, history {model['history']}): "
        f"{result['iterations']} x {config['num_games']} games x {config['rollout']} frames"
    )
    print(
        f"env steps/s: {result['env_steps_per_s']:,.0f} end to end"
        + (f", {steady:,.0f} without the first iteration" if steady else "")
        + f" (first iteration {result['first_iteration_s']:.2f} s, wall {result['wall_s']:.2f} s)"
    )
    print(
        f"time: sample {sample:.1f}% | learn {100 - sample:.1f}% = prep {prep:.1f}% | "
        f"SGD {100 - prep:.1f}% of learning" + (" (steady iterations)" if steady else "")
    )
    mix = ", ".join(f"{key} {100 * weight:.0f}%" for key, weight in result["mix"].items())
    print(
        f"opponents (mix of the last iteration: {mix}); games won: "
        + ", ".join(f"{result['wins'][k]}/{n} vs {k}" for k, n in result["games"].items())
    )
    print(
        f"first minibatch max |logp_new - logp_old| {result['first_max_abs_logratio']:.1e}; "
        f"last: pg {final['loss_pg']:.4f}, vf {final['loss_vf']:.4f}, entropy "
        f"{final['entropy']:.3f}, approx_kl {final['approx_kl']:.5f}"
    )
    if result["peak_gpu_mem_gib"] is not None:
        print(f"peak GPU memory: {result['peak_gpu_mem_gib']:.2f} GiB")
