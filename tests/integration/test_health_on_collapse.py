"""`health.on_collapse`: `stop` ends the run without saving the collapsed policy (the last
healthy checkpoint stays `latest`); `warn` goes on but flags the checkpoints it saves, and
`--resume` refuses a flagged checkpoint unless `--force`."""

import json

from typer.testing import CliRunner

from rl_platform import load_spec, train
from rl_platform.cli import app
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from tests.conftest import EXPERIMENTS
from tests.reliability.support import TINY, sets

SPEC = EXPERIMENTS / "cartpole_ppo.yaml"
# Any policy's entropy is below 100 nats: every iteration counts as collapsed.
COLLAPSING = ["health.min_entropy=100", "checkpoint.every_iterations=1"]


def _spec(*extra: str):
    return load_spec(SPEC, profile="smoke", overrides=[*TINY, *extra])


def test_on_collapse_stop_keeps_the_healthy_latest_and_warn_flags_what_it_saves(
    ray_local, tmp_path
):
    healthy = train(_spec("stop.iterations=2", "checkpoint.every_iterations=1"), out_dir=tmp_path)
    run_dir = healthy.run_dir
    store = CheckpointStore(run_dir / "checkpoints")
    assert store.latest().name == "iter_000002"

    stopped = train(
        _spec("stop.iterations=5", "health.on_collapse=stop", *COLLAPSING), resume=run_dir
    )
    assert stopped.iterations == 3 and "entropy" in stopped.stop_reason
    assert store.latest().name == "iter_000002"
    assert not (run_dir / "checkpoints" / "iter_000003").exists()
    assert (
        "the collapsed policy was not saved; latest stays iter_000002"
        in (run_dir / "train.log").read_text()
    )

    warned = train(_spec("stop.iterations=3", *COLLAPSING), resume=run_dir)
    assert warned.iterations == 3
    flagged = load_checkpoint(store.latest())
    assert store.latest().name == "iter_000003"
    assert flagged.meta["health"]["status"] == "collapsed"
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert rows[-1]["health/entropy_collapse"] == 1.0

    args = ["train", str(SPEC), "--profile", "smoke", *sets([*TINY, "stop.iterations=4"])]
    refused = CliRunner().invoke(app, [*args, "--resume", str(run_dir)])
    assert refused.exit_code == 2, refused.output
    assert "collapsed" in refused.output and "--force" in refused.output
    assert store.latest().name == "iter_000003"

    forced = train(_spec("stop.iterations=4"), resume=run_dir, force=True)
    assert forced.iterations == 4
