"""Round 4, item 4: exit 2, never 70, for what a user hands us. A job address that is an HTTP
server but not Ray; `rlp eval -n` with a count no machine holds at once (played in chunks and
folded as it goes: bounded memory, Ctrl+C within a second or two); `rlp run` with absurd
proportions; a checkpoint written in a newer format (refused naming both formats before any
tensor is decoded). In-process through Typer's CliRunner, except the Ctrl+C test, which needs a
real `rlp eval` to interrupt; nothing here starts Ray.
"""

import contextlib
import http.server
import importlib
import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.envs.duel.pettingzoo_env import action_space, observation_space
from rl_platform.evaluation import arena_games, multi
from rl_platform.evaluation.eval import OPPONENT_KEY, POLICY_KEY
from rl_platform.evaluation.summary import summarize
from rl_platform.policies import EnvContext, load_policy
from rl_platform.storage.checkpoints import (
    CheckpointStore,
    load_checkpoint,
    meta_digest,
    sha256_file,
)
from rl_platform.teachers import DUEL_ENV
from rl_platform.utils import state_codec
from rl_platform.utils.state_codec import STATE_FORMAT, StateFormatError
from tests.reliability.support import REPO, RLP, child_env, exit_2_in_one_line, wait_for


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


# ----- a job address that is an HTTP server, but not Ray's --------------------------------
class _NotRay(http.server.BaseHTTPRequestHandler):
    """Answers like a web server that is not Ray's job server."""

    answer: tuple[int, bytes] = (404, b"not found")

    def do_GET(self) -> None:
        status, body = self.answer
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def _web_server(status: int, body: bytes) -> Iterator[str]:
    handler = type("Handler", (_NotRay,), {"answer": (status, body)})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, b"not found"),  # once "RuntimeError: Version check returned 404", exit 70
        (200, b"<html>a web page</html>"),  # not JSON
        (200, b'{"version": "2.0"}'),  # JSON without Ray's version
        (500, b"internal error"),
    ],
    ids=["404", "html", "other_json", "500"],
)
@pytest.mark.parametrize("verb", [["jobs", "list"], ["jobs", "status", "raysubmit_x"]])
def test_a_job_address_that_is_not_a_ray_job_server_is_one_line_naming_it(verb, status, body):
    with _web_server(status, body) as address:
        line = exit_2_in_one_line(
            _invoke(*verb, "--address", address), address, "not as a Ray job server"
        )
    assert "8265" in line  # the hint: the dashboard port


# ----- rlp eval -n: any count, bounded memory, Ctrl+C honoured -----------------------------
def _duel_policies() -> dict:
    context = EnvContext(DUEL_ENV, observation_space(), action_space())
    return {
        POLICY_KEY: load_policy("scripted://duel/based", env=context, sample=False),
        OPPONENT_KEY: load_policy("scripted://duel/constant", env=context, sample=False),
    }


@pytest.mark.parametrize("seat", ["first", "second", "alternate"])
def test_the_arena_plays_in_chunks_numbered_and_seated_as_one_batch(seat, monkeypatch):
    settings = {"max_steps": 60}
    whole = arena_games.arena_episodes(
        _duel_policies(), episodes=9, seat=seat, seed=0, env_kwargs=settings
    )
    monkeypatch.setattr(arena_games, "ARENA_CHUNK", 2)  # 9 games: chunks of 2, 2, ..., 1
    chunked = arena_games.arena_episodes(
        _duel_policies(), episodes=9, seat=seat, seed=0, env_kwargs=settings
    )
    assert [r.index for r in chunked] == list(range(9))
    assert [r.seats for r in chunked] == [r.seats for r in whole]
    assert summarize(chunked, POLICY_KEY)["seats"] == 9
    assert summarize(chunked, POLICY_KEY)["win_rate"] == summarize(whole, POLICY_KEY)["win_rate"]


def _rss_mib(pid: int) -> float:
    psutil = importlib.import_module("psutil")  # bundled with Ray (tests/reliability/support.py)
    return psutil.Process(pid).memory_info().rss / 2**20


def _cpu_s(pid: int) -> float:
    psutil = importlib.import_module("psutil")
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


@pytest.mark.parametrize(
    "args",
    [
        ["scripted://duel/based", "-e", "duel"],  # the vectorized arena (once 1e9 games at once)
        ["random", "-e", "CartPole-v1"],  # the episode-by-episode rollout
    ],
    ids=["arena", "rollout"],
)
def test_rlp_eval_of_a_billion_episodes_holds_bounded_memory_and_stops_on_ctrl_c(args, tmp_path):
    log = tmp_path / "eval.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(RLP), "eval", *args, "-n", "1000000000", "--json"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=child_env(),
            cwd=REPO,
            start_new_session=True,
        )
    try:
        # Imports take ~3 s of CPU; then it plays. Watch its memory for a few seconds of play.
        wait_for(lambda: proc.poll() is not None or _cpu_s(proc.pid) > 6, timeout_s=60, what="play")
        assert proc.poll() is None, log.read_text()
        peak = max(_rss_mib(proc.pid) for _ in range(10) if time.sleep(0.2) is None)
        assert peak < 1500, f"{peak:.0f} MiB while playing"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=10)
        waited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    output = log.read_text()
    assert code == 130, output
    assert waited < 2.5, f"exited {waited:.1f} s after Ctrl+C"
    assert "Traceback" not in output and output.strip().splitlines()[-1] == "interrupted"


# ----- rlp run: absurd proportions ---------------------------------------------------------
@pytest.mark.parametrize(
    ("proportions", "total", "expected"),
    [
        ([1e308, 1e308], 4, [2, 2]),  # their sum overflows (once a reshape error, exit 70)
        ([1e308, 1.0], 4, [4, 0]),
        ([5e-324, 5e-324], 4, [2, 2]),  # subnormal
        ([3.0, 5.0], 16, [6, 10]),
    ],
)
def test_seat_counts_sum_to_the_seats_whatever_the_proportions(proportions, total, expected):
    assert multi.seat_counts(proportions, total) == expected


def test_rlp_run_with_absurd_proportions_plays_its_episodes():
    result = _invoke(
        "run",
        "-p",
        "scripted://duel/based,proportion=1e308",
        "-p",
        "scripted://duel/constant,proportion=1e308",
        "-e",
        "duel",
        "-n",
        "2",
        "--max-steps",
        "5",
        "--json",
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["policies"]
    assert [row["seats"] for row in rows] == [2, 2]


def test_seats_are_planned_chunk_by_chunk_with_exact_proportions(monkeypatch):
    monkeypatch.setattr(multi, "PLAN_CHUNK", 4)
    plan = multi.SeatPlan(["a", "b"], [1.0, 3.0], episodes=10, agents=["p0", "p1"], seed=0)
    seatings = [plan(index) for index in range(10)]
    for start in (0, 4):  # whole chunks: 8 seats, 2 of a and 6 of b
        seats = [key for seating in seatings[start : start + 4] for key in seating.values()]
        assert seats.count("a") == 2 and seats.count("b") == 6
    assert len(plan.plan) == 2  # the last chunk holds only what is left
    first = multi.allocate_seats(
        ["a", "b"], [1.0, 3.0], episodes=4, agents=["p0", "p1"], rng=np.random.default_rng(0)
    )
    assert seatings[:4] == first  # chunk 0 is the plan a single allocation makes


# ----- a checkpoint written in a newer format ----------------------------------------------
def _checkpoint(tmp_path: Path) -> Path:
    tree = {"learner_group": {"learner": {"rl_module": {"main": {"w": np.ones((2, 3))}}}}}
    return CheckpointStore(tmp_path / "run" / "checkpoints").save(
        iteration=1, parts={"algorithm": tree}, meta={"env_steps": 200}
    )


def _as_a_newer_version_writes(folder: Path, how: str) -> None:
    """Rewrite a checkpoint as a newer rl_platform might, hashes recorded again (its record is
    intact: only the format is new)."""
    part = folder / "algorithm.json"
    document = json.loads(part.read_text())
    meta = json.loads((folder / "rlp_state.json").read_text())
    if how == "part_labelled_v2":
        document["format"] = "rlp-state-v2"
    elif how == "record_labelled_v2":  # and a layout this version does not know
        meta["format"] = "rlp-state-v2"
        meta["parts"] = meta.pop("sha256")
    elif how == "unknown_array_tag":  # once a TypeError when the weights were used (exit 70)
        module = document["tree"]["learner_group"]["learner"]["rl_module"]["main"]
        module["w"] = {"__bf16_array__": module["w"]["__array__"]}
    part.write_text(json.dumps(document))
    meta["files"] = {
        name: sha256_file(folder / name) for name in meta["files"] if (folder / name).is_file()
    }
    meta["meta_sha256"] = meta_digest(meta)
    (folder / "rlp_state.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("how", ["part_labelled_v2", "record_labelled_v2", "unknown_array_tag"])
def test_a_checkpoint_in_a_newer_format_is_refused_naming_both_formats(how, tmp_path, monkeypatch):
    folder = _checkpoint(tmp_path)
    assert load_checkpoint(folder).meta["format"] == STATE_FORMAT
    _as_a_newer_version_writes(folder, how)
    decoded: list[str] = []
    monkeypatch.setattr(state_codec, "load_arrays", lambda *a, **k: decoded.append("x"))
    with pytest.raises(StateFormatError) as info:
        load_checkpoint(folder)
    message = str(info.value)
    assert STATE_FORMAT in message and "\n" not in message
    if how != "unknown_array_tag":
        assert "rlp-state-v2" in message and "newer" in message
    else:
        assert "__bf16_array__" in message
    assert decoded == []
    monkeypatch.undo()
    out = tmp_path / "policy.safetensors"
    exit_2_in_one_line(_invoke("export", str(folder), str(out)), STATE_FORMAT)
    assert not out.exists()


def test_a_checkpoint_without_a_format_label_is_read_as_the_first_format(tmp_path):
    """Checkpoints written before the record carried its format still load."""
    folder = _checkpoint(tmp_path)
    meta = json.loads((folder / "rlp_state.json").read_text())
    del meta["format"]
    meta["meta_sha256"] = meta_digest(meta)
    (folder / "rlp_state.json").write_text(json.dumps(meta))
    weights = load_checkpoint(folder).parts["algorithm"]["learner_group"]["learner"]
    assert weights["rl_module"]["main"]["w"].shape == (2, 3)
