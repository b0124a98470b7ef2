#!/usr/bin/env bash
# The one-GPU-machine checks and measurements of docs/cluster.md ("One GPU machine"), in one
# go, from the repository's root on a machine with CUDA:
#
#   benchmarks/one_gpu_machine.sh OUT_DIR [MINUTES] [-s KEY=VALUE ...]
#
# 1. the CUDA tests (tests/gpu, the `gpu` marker);
# 2. the plain-torch yardstick (benchmarks/plain_torch_recipe.py) on the GPU, 10 iterations,
#    eager (the floor), then `--captured` (acting and minibatch steps as CUDA graphs: the bar);
# 3. `rlp train experiments/duel_selfplay_transformer.yaml --profile gpu` for MINUTES of
#    training (default 1.5) or 3M env steps, whichever comes first, sampled by py-spy for 60 s
#    where py-spy is installed; if it fails in its first 2 minutes, once more without CUDA
#    graphs (`resources.cuda_graphs=false`);
# then the run's split (benchmarks/run_split.py). OUT_DIR gets summary.txt, console.txt, the
# run's metrics.jsonl, evaluation.jsonl and train.log (copied as the run goes, so a run cut
# short still leaves them), the yardstick's two JSONs and the py-spy profile.
# PYTHON picks the interpreter (default python3).
set -uo pipefail
out=${1:?usage: one_gpu_machine.sh OUT_DIR [MINUTES] [-s KEY=VALUE ...]}
minutes=${2:-1.5}
shift $(( $# >= 2 ? 2 : 1 ))
python=${PYTHON:-python3}
runs=$(mktemp -d)
mkdir -p "$out"
summary="$out/summary.txt"
log() { echo "== $(date +%T) $*" | tee -a "$summary"; }

copy_run() {  # the newest run folder's files into OUT_DIR
    local run_dir
    run_dir=$(ls -td "$runs"/*/* 2>/dev/null | head -1)
    [ -n "$run_dir" ] || return 0
    for name in metrics.jsonl evaluation.jsonl train.log; do
        [ -f "$run_dir/$name" ] && cp "$run_dir/$name" "$out/$name"
    done
    return 0
}

train() {  # train MINUTES [extra -s ...]; returns its exit code
    local budget=$1
    shift
    log "rlp train --profile gpu ($budget min) $*"
    "$python" -m rl_platform.cli train experiments/duel_selfplay_transformer.yaml \
        --profile gpu -s logging.wandb=off -s "stop.minutes=$budget" \
        -s stop.env_steps=3000000 "$@" --out "$runs" >> "$out/console.txt" 2>&1 &
    local pid=$! started=$SECONDS
    if command -v py-spy > /dev/null && [ ! -f "$out/train_profile.txt" ]; then
        (sleep 45 && py-spy record --pid "$pid" --duration 60 --rate 50 --nonblocking \
            --format raw -o "$out/train_profile.txt" > /dev/null 2>&1) &
    fi
    while kill -0 "$pid" 2> /dev/null; do sleep 10; copy_run; done
    wait "$pid"
    local code=$?
    copy_run
    echo "exit code $code after $(( SECONDS - started )) s" | tee -a "$summary"
    return $(( code != 0 && SECONDS - started < 120 ))
}

log "machine"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  echo "$(nproc) CPUs"
  "$python" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'
} 2>&1 | tee -a "$summary"

log "CUDA tests"
"$python" -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -12 | tee -a "$summary"

log "plain-torch yardstick"
timeout 150 "$python" -m benchmarks.plain_torch_recipe --device cuda --env-steps 40960 \
    --json "$out/plain_torch_recipe.json" 2>&1 | tail -6 | tee -a "$summary"
timeout 150 "$python" -m benchmarks.plain_torch_recipe --device cuda --captured \
    --env-steps 40960 --json "$out/plain_torch_recipe_captured.json" 2>&1 | tail -6 \
    | tee -a "$summary"

if ! train "$minutes" "$@"; then
    log "the run failed early: again without CUDA graphs"
    train "$minutes" -s resources.cuda_graphs=false "$@"
fi
grep -E "iter |rror|evaluation at|stopped|without CUDA graphs" "$out/console.txt" \
    | tail -6 | cut -c1-220 | tee -a "$summary"
[ -f "$out/metrics.jsonl" ] && cp "$out/metrics.jsonl" "$runs/metrics.jsonl" \
    && "$python" -m benchmarks.run_split "$runs" 2>&1 | tee -a "$summary"
rm -rf "$runs"
