#!/usr/bin/env bash
# Everything one GPU-machine call measures for the array learner (issue #48) and docs/cluster.md
# ("One GPU machine"), in one go, from the repository's root on a machine with CUDA:
#
#   benchmarks/one_gpu_machine.sh OUT_DIR [MINUTES] [-s KEY=VALUE ...]
#
# Prepared here beforehand: `benchmarks/fetch_gpu_wheels.sh` packs what the machine lacks (Ray
# and the rest, benchmarks/gpu_wheels.txt) as .whl/site.tar.xz; the device call carries it
# (`carry: [".whl/site.tar.xz"]`). Each step has its own time limit; the whole takes at most
# ~9 minutes with the default MINUTES (3.5):
#   0. unpack the wheels into /tmp/site (20 s)
#   1. the `gpu` tests: tests/gpu (90 s)
#   2. the yardsticks, plain torch on the GPU: eager, then `--captured` (60 s each)
#   3. `rlp train experiments/duel_selfplay_transformer.yaml --profile gpu` for 1 minute with
#      `resources.overlap=false`, then 1 minute with `true`: throughput and the perf split
#   4. the same recipe's learning run for the rest of MINUTES (toward 3M env steps), its
#      evaluations vs `based` in evaluation.jsonl
# OUT_DIR gets summary.txt first (one screen: machine, tests, yardsticks, the runs' env steps/s
# and splits, the last evaluations), then console.txt and the runs' metrics/evaluation rows.
# A learning run cannot be resumed from what comes back: a run's folder holds the league's
# snapshots (16 MB each at the recipe's size), over what a call may bring back (8 files of at
# most 16 MiB); the second call starts a new run.
# PYTHON picks the interpreter (default python3).
set -uo pipefail
out=${1:?usage: one_gpu_machine.sh OUT_DIR [MINUTES] [-s KEY=VALUE ...]}
minutes=${2:-3.5}
shift $(( $# >= 2 ? 2 : 1 ))
python=${PYTHON:-python3}
runs=$(mktemp -d)
mkdir -p "$out"
summary="$out/summary.txt"
log() { echo "== $(date +%T) $*" | tee -a "$summary"; }
recipe=experiments/duel_selfplay_transformer.yaml

if [ -f .whl/site.tar.xz ]; then
    mkdir -p /tmp/site && timeout 60 tar -xJf .whl/site.tar.xz -C /tmp/site
    export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0 WANDB_MODE=disabled

log "machine"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  echo "$(nproc) CPUs"
  "$python" -c 'import sys, torch, ray; print(sys.version.split()[0], "torch", torch.__version__, "ray", ray.__version__)'
} 2>&1 | tee -a "$summary"

log "gpu tests"
timeout 90 "$python" -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -6 | tee -a "$summary"

for mode in eager captured; do
    log "plain-torch yardstick ($mode)"
    flag=$([ "$mode" = captured ] && echo --captured)
    timeout 60 "$python" -m benchmarks.plain_torch_recipe --device cuda --env-steps 40960 \
        $flag --json "$out/plain_torch_recipe_$mode.json" 2>&1 | tail -4 | tee -a "$summary"
done

train() {  # NAME MINUTES [extra -s ...]: one run of the recipe, its split into the summary
    local name=$1 budget=$2
    shift 2
    log "rlp train --profile gpu: $name ($budget min) $*"
    timeout $(( ${budget%.*} * 60 + 90 )) "$python" -m rl_platform.cli train "$recipe" \
        --profile gpu -s logging.wandb=off -s "stop.minutes=$budget" -s stop.env_steps=3000000 \
        "$@" --out "$runs/$name" >> "$out/console.txt" 2>&1
    echo "exit code $?" | tee -a "$summary"
    local run_dir
    run_dir=$(ls -td "$runs/$name"/*/* 2> /dev/null | head -1)
    [ -n "$run_dir" ] || return 0
    for file in metrics.jsonl evaluation.jsonl; do
        [ -f "$run_dir/$file" ] && cp "$run_dir/$file" "$out/${name}_$file"
    done
    "$python" -m benchmarks.run_split "$run_dir" 2>&1 | tail -4 | tee -a "$summary"
}

train synchronous 1 -s resources.overlap=false -s evaluation.every_env_steps=null "$@"
train overlap 1 -s resources.overlap=true -s evaluation.every_env_steps=null "$@"
rest=$("$python" -c "print(max(1.0, $minutes - 2))")
train learning "$rest" -s evaluation.every_env_steps=250000 "$@"
grep -h "eval/greedy/win_rate/based\|eval/sampled/win_rate/based" "$out/learning_evaluation.jsonl" \
    2> /dev/null | tail -2 | cut -c1-200 | tee -a "$summary"
rm -rf "$runs"
