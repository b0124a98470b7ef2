"""The answer of `benchmarks/opponent_encoder_value.py` (issue #43): per-model win rates on the
hidden-intent set and on the open styles, read against the memoryless ceiling, and the
differences that say whether memory pays, each as a mean over seeds with a 95% bootstrap
interval (`benchmarks.common.spread.bootstrap_interval`).

    from benchmarks.common.intent_report import print_report
"""

from collections.abc import Mapping, Sequence

import numpy as np

from benchmarks.common.spread import bootstrap_interval
from benchmarks.common.style_arena import ALL_MEMORY_CUT, HISTORY_CUT, MEMORY_CUT, MODES

LABELS = {
    "mlp": "(a) mlp",
    "lstm": "(b) lstm",
    "transformer_lstm": "(c) transformer_lstm",
    MEMORY_CUT: "(b0) lstm, memory cut",
    HISTORY_CUT: "(c0) transformer_lstm, history cut",
    ALL_MEMORY_CUT: "(c00) transformer_lstm, all memory cut",
}
DIFFERENCES = {
    "(c) - (c0)": ("transformer_lstm", HISTORY_CUT, "memory pays: >= +0.15, interval above 0"),
    "(b) - (b0)": ("lstm", MEMORY_CUT, "the LSTM's memory alone"),
    "(c) - (b)": (
        "transformer_lstm",
        "lstm",
        ">= +0.10 with the interval above 0, or an interval that excludes +0.05",
    ),
}
"""Name -> (minuend row, subtrahend row, issue #43's goal), on the hidden-intent set."""
Rows = Mapping[str, Mapping[str, float]]


def mean_and_interval(values: Sequence[float], *, signed: bool = False) -> str:
    """`0.42 [0.31, 0.55]`, or `0.42 [1 seed]` where no interval can be drawn."""
    if not values:
        return "n/a"
    form = "+.2f" if signed else ".2f"
    interval = bootstrap_interval(values)
    mean = format(float(np.mean(values)), form)
    if interval is None:
        return f"{mean} [1 seed]"
    return f"{mean} [{interval[0]:{form}}, {interval[1]:{form}}]"


def _over_seeds(rows_by_seed: Sequence[Rows], policy: str, key: str) -> list[float]:
    return [rows[policy][key] for rows in rows_by_seed if policy in rows]


def print_means(rows_by_seed: Sequence[Rows], *, mode: str, ceilings: Mapping[str, float]) -> None:
    """One row per policy: its mean over seeds against each hidden-intent opponent (the keys
    of `ceilings`), the set's mean with its interval and its distance to the ceiling, and the
    open styles' mean."""
    hidden = list(ceilings)
    ceiling = float(np.mean([ceilings[o] for o in hidden]))
    opponents = " | ".join(f"`{o}`" for o in hidden)
    print(f"\n{mode}: win rate, mean over seeds [95% bootstrap interval]\n")
    print(f"| policy | {opponents} | hidden-intent set | minus the ceiling | open styles | seeds |")
    print("|---|" + "---|" * (len(hidden) + 4))
    cells = " | ".join(f"{ceilings[o]:.2f}" for o in hidden)
    print(f"| memoryless ceiling | {cells} | {ceiling:.2f} | 0 | - | - |")
    policies = [p for p in LABELS if any(p in rows for rows in rows_by_seed)]
    for policy in policies:
        per_opponent = " | ".join(
            f"{np.mean(_over_seeds(rows_by_seed, policy, f'{mode}/{o}')):.2f}" for o in hidden
        )
        means = _over_seeds(rows_by_seed, policy, f"{mode}/mean/hidden_intent")
        above = [value - ceiling for value in means]
        open_styles = _over_seeds(rows_by_seed, policy, f"{mode}/mean/open")
        print(
            f"| {LABELS[policy]} | {per_opponent} | {mean_and_interval(means)} | "
            f"{np.mean(above):+.2f} | {mean_and_interval(open_styles)} | {len(means)} |"
        )


def differences(rows_by_seed: Sequence[Rows], *, mode: str) -> dict[str, list[float]]:
    """Per difference, its value in each seed that has both rows, on the hidden-intent set."""
    key = f"{mode}/mean/hidden_intent"
    return {
        name: [rows[a][key] - rows[b][key] for rows in rows_by_seed if a in rows and b in rows]
        for name, (a, b, _) in DIFFERENCES.items()
    }


def print_differences(rows_by_seed: Sequence[Rows], *, mode: str) -> None:
    print(f"\n{mode}, hidden-intent set: differences, mean over seeds [95% bootstrap interval]\n")
    print("| difference | mean [95% interval] | seeds | goal (issue #43) |")
    print("|---|---|---|---|")
    for name, values in differences(rows_by_seed, mode=mode).items():
        shown = mean_and_interval(values, signed=True)
        print(f"| {name} | {shown} | {len(values)} | {DIFFERENCES[name][2]} |")


def print_report(rows_by_seed: Sequence[Rows], *, ceilings: Mapping[str, float]) -> None:
    """Means and differences, greedy and sampled; says so when one seed gives no interval.
    `ceilings`: the memoryless ceiling of each opponent of the hidden-intent set."""
    for mode in MODES:
        print_means(rows_by_seed, mode=mode, ceilings=ceilings)
        print_differences(rows_by_seed, mode=mode)
    if len(rows_by_seed) < 2:
        print(
            "\nOne seed: the intervals are degenerate (`[1 seed]`: no interval from one value). "
            "Run `--seeds 0 1 2 3 4` for issue #43's intervals."
        )
