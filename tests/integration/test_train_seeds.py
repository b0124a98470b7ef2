"""`rlp train --seeds`: the seeds of a spec as Tune trials in one experiment folder, each a
normal run folder, with the aggregate over seeds beside them and `rlp plot` drawing the band."""

import json
from pathlib import Path

import numpy as np

from rl_platform import load_spec
from rl_platform.storage.metrics_rows import read_metrics
from tests.conftest import EXPERIMENTS
from tests.integration.cli_support import invoke_rlp as rlp
from tests.integration.conftest import TINY

RETURN = "train/episode_return_mean"


def test_two_seeds_train_in_their_own_run_folders_and_aggregate(ray_local, tmp_path: Path):
    result = rlp(
        "train", str(EXPERIMENTS / "cartpole_ppo.yaml"), "--profile", "smoke", "--seeds", "2",
        "--out", str(tmp_path), *(f"--set={o}" for o in [*TINY, "logging.tensorboard=false"]),
    )  # fmt: skip
    [parent] = (tmp_path / "seeds" / "cartpole_ppo").iterdir()
    assert f"seeds folder: {parent}" in result.stderr
    finals = []
    for seed in (0, 1):
        run = parent / f"seed_{seed}"
        assert load_spec(run / "spec.yaml").seed == seed
        assert (run / "checkpoints" / "latest").read_text().strip() == "iter_000002"
        rows = read_metrics(run)
        assert [row["iteration"] for row in rows] == [1, 2]
        finals.append(rows[-1][RETURN])
    assert finals[0] != finals[1]  # the seeds did differ

    summary = json.loads((parent / "trial_metrics.json").read_text())
    assert summary["seeds"] == [0, 1] and summary["failed"] == {}
    entry = summary["metrics"][RETURN]
    assert entry["n"] == 2 and entry["values"] == finals
    assert entry["mean"] == entry["iqm"] == np.mean(finals)
    assert entry["ci95"] == [min(finals), max(finals)]  # two seeds: the interval spans both
    assert f"trial_metrics {RETURN} mean:{entry['mean']:.4g} " in result.stderr

    out = tmp_path / "seeds.png"
    plotted = json.loads(rlp("plot", str(parent), "--out", str(out), "--json").stdout)
    assert plotted["groups"] == {"cartpole_ppo": 2} and out.is_file()
