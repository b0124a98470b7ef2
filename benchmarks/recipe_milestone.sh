#!/usr/bin/env bash
# A milestone of the reference recipe's long run (issue #56), measured and shipped in one go:
#
#   benchmarks/recipe_milestone.sh RECIPE_RUN MLP_RUN OUT [GAMES]
#
# RECIPE_RUN: the run folder of `rlp train experiments/duel_selfplay_transformer.yaml`, stopped
# (the tournament writes its league). MLP_RUN: a finished `experiments/duel_selfplay.yaml` run
# of the same env-step budget. OUT: a folder for the reports. GAMES: per cell (default 200).
#
# 1. exports the recipe's main policy (bf16) to experiments/pretrained/duel_recipe.safetensors
#    and the MLP's to OUT/mlp_league.safetensors;
# 2. the recipe against every scripted style, greedy and sampled, intact and with its history
#    cut (benchmarks/recipe_report.py), and the MLP the same way (no history to cut);
# 3. `rlp eval` of the shipped file against `based`, 200 games per mode, seats alternating:
#    the acceptance command, whose numbers go to the model card;
# 4. the two policies head to head, 2 x GAMES games per mode (benchmarks/duel_head_to_head.py,
#    under the recipe's closing zone);
# 5. a tournament in the recipe's league: main, `based` and the MLP as a guest;
# 6. the evaluation curves of both runs (rlp plot) into OUT.
set -euo pipefail
recipe=$1 mlp=$2 out=$3 games=${4:-200}
mkdir -p "$out"
shipped=experiments/pretrained/duel_recipe.safetensors
mkdir -p "$(dirname "$shipped")"

uv run rlp export "$recipe" "$shipped" --module main --dtype bf16
uv run rlp export "$mlp" "$out/mlp_league.safetensors" --module main

uv run python -m benchmarks.recipe_report "policy://$shipped" --games "$games" \
    --json "$out/recipe_report.json" | tee "$out/recipe_report.txt"
uv run python -m benchmarks.recipe_report "policy://$out/mlp_league.safetensors" \
    --games "$games" --json "$out/mlp_report.json" | tee "$out/mlp_report.txt"

for mode in "" "--sample"; do
    uv run rlp eval "policy://$shipped" --env duel --opponent scripted://duel/based \
        --episodes 200 --seat alternate $mode --json | tee -a "$out/rlp_eval_based.jsonl"
done

zone=$(uv run python -c "
from rl_platform.storage.saved_spec import read_saved_spec
print(read_saved_spec('$recipe').env.kwargs.get('zone_closes_at', ''))")
for mode in "" "--sample"; do
    uv run python -m benchmarks.duel_head_to_head "policy://$shipped" \
        "policy://$out/mlp_league.safetensors" --games $((2 * games)) ${zone:+--zone $zone} \
        $mode | tee -a "$out/head_to_head.txt"
done

uv run rlp league tournament "$recipe" -m main -m based \
    --guest "policy://$out/mlp_league.safetensors" --games "$games" \
    --out "$out/tournament.png" 2>&1 | tee "$out/tournament.txt"

for mode in greedy sampled; do
    uv run rlp plot "$recipe" "$mlp" --metric "eval/$mode/win_rate/based" \
        --out "$out/curve_$mode.png"
done
echo "milestone written to $out and $shipped"
