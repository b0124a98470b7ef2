"""`python -m tests.reliability.kill_point_child ARGS...`: `rlp ARGS...`, frozen at one point.

`RLP_TEST_FREEZE_AT=POINT:N` names the moment: the N-th time the run reaches POINT, this process
creates `RLP_TEST_FROZEN_FILE` and sleeps, and the test SIGKILLs it with its Ray there
(`TrainProcess.kill_tree`): a SIGKILL at that exact moment, without a hook in rl_platform.
Points: `inside_checkpoint` (part files written, its rlp_state.json not), `before_latest`
(checkpoint folder complete, `latest` not moved), `before_evaluation_row` (checkpoint saved,
its evaluation row not written), `before_metrics_row`, `torn_metrics_row` (half a line written).
"""

import functools
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rl_platform.cli import app
from rl_platform.run import sinks, train
from rl_platform.storage import checkpoints

POINT, _, NTH = os.environ["RLP_TEST_FREEZE_AT"].partition(":")
FROZEN = Path(os.environ["RLP_TEST_FROZEN_FILE"])
calls = 0


def freeze(*_args: Any, **_kwargs: Any) -> None:
    FROZEN.write_text(POINT)
    while True:
        time.sleep(60)


def at_nth(original: Callable[..., Any], before: Callable[..., None] = freeze) -> Callable:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global calls
        calls += 1
        if calls == int(NTH):
            before(*args, **kwargs)
        return original(*args, **kwargs)

    return wrapper


def torn_write(sink: sinks.MetricSinks, metrics: dict[str, float]) -> None:
    import json

    line = json.dumps(metrics)
    sink._jsonl._file.write(line[: len(line) // 2])  # half a row, as a kill mid-write
    sink._jsonl._file.flush()
    freeze()


if POINT == "inside_checkpoint":
    checkpoints.write_json_atomic = at_nth(checkpoints.write_json_atomic)
elif POINT == "before_latest":
    checkpoints.write_text_atomic = at_nth(checkpoints.write_text_atomic)
elif POINT == "before_evaluation_row":
    cls = train.RunFolderReporter
    cls._record_evaluation = at_nth(cls._record_evaluation)
elif POINT == "before_metrics_row":
    sinks.MetricSinks.write = at_nth(sinks.MetricSinks.write)
elif POINT == "torn_metrics_row":
    sinks.MetricSinks.write = at_nth(sinks.MetricSinks.write, before=torn_write)
else:
    raise SystemExit(f"unknown kill point {POINT}")

app(prog_name="rlp")
