"""Round 4, item 6: messages that point the right way. Each is one line, exit 2, no traceback,
and names the actual cause: a duplicate key inside a `--set` mapping, a boolean given for a
count, a spec path that is a folder, a `league.json` that is not a file, a secret in a path,
an alias bomb small enough to pass the old expansion bound. Also `rl_platform.train` from a
thread other than the main one (which cannot install signal handlers). In-process through
Typer's CliRunner; only the thread test trains (on the session Ray).
"""

import json
import resource
import signal
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.league import League, LeagueSpec
from rl_platform.utils.safe_yaml import MAX_ALIAS_VALUES, YamlLimitError, parse_yaml
from tests.reliability.support import TINY, exit_2_in_one_line

SECRET = "sekrit-round4-5c3e"
SPEC = "name: round4\nenv: {id: CartPole-v1}\nstop: {iterations: 1}\n"


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _spec(tmp_path: Path, text: str = SPEC) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def _validate_and_train(tmp_path: Path, spec: Path, *args: str, fragments: list[str]) -> str:
    """The same one line from `rlp validate` and `rlp train`, and no run folder."""
    exit_2_in_one_line(_invoke("validate", str(spec), *args), *fragments)
    runs = tmp_path / "runs"
    line = exit_2_in_one_line(_invoke("train", str(spec), *args, "--out", str(runs)), *fragments)
    assert not runs.exists()
    return line


def test_a_duplicate_key_inside_a_set_mapping_is_named_as_a_duplicate(tmp_path):
    spec = _spec(tmp_path)
    line = _validate_and_train(
        tmp_path,
        spec,
        "--set",
        "training={lr: 1, lr: 2}",
        fragments=["--set training", "'lr' is given twice"],
    )
    assert "valid dictionary" not in line


@pytest.mark.parametrize(
    "override",
    [
        "training.num_epochs=true",
        "stop.iterations=true",
        "checkpoint.keep_last=false",
        "seed=true",
        "model.hidden=[true, 64]",
    ],
)
def test_a_boolean_is_not_a_count(override, tmp_path):
    key = override.partition("=")[0]
    _validate_and_train(tmp_path, _spec(tmp_path), "--set", override, fragments=[key, "a boolean"])


@pytest.mark.parametrize(
    "override",
    # Valid today, and still: YAML reads `4e3` as a float, a `${...}` value may be a string.
    ["training.train_batch_size=4e3", "stop.iterations=${vars.n}", "seed=7"],
)
def test_counts_written_as_whole_floats_or_strings_still_pass(override, tmp_path):
    spec = _spec(tmp_path, SPEC + "vars: {n: '3'}\n")
    result = _invoke("validate", str(spec), "--set", override)
    assert result.exit_code == 0, result.output


def test_a_spec_path_that_is_a_folder_says_so(tmp_path):
    folder = tmp_path / "specs"
    folder.mkdir()
    line = _validate_and_train(tmp_path, folder, fragments=[str(folder), "is a folder"])
    assert "not found" not in line
    spec = _spec(tmp_path, SPEC + "_base: specs\n")  # an include that is a folder
    exit_2_in_one_line(_invoke("validate", str(spec)), str(folder), "is a folder")


def test_a_league_json_that_is_not_a_regular_file_says_so(tmp_path):
    run_dir = tmp_path / "run"
    manifest = run_dir / "league" / "league.json"
    manifest.mkdir(parents=True)  # a folder where the manifest belongs
    line = exit_2_in_one_line(_invoke("league", "show", str(run_dir)), str(manifest), "is a folder")
    assert "not found" not in line
    spec = LeagueSpec.model_validate({"scripted": ["based"]})
    with pytest.raises(UserError, match=r"league\.json is a folder"):  # `--resume` opens this
        League(spec=spec, storage=run_dir / "league", seed=0)
    assert manifest.is_dir() and not any(manifest.iterdir())


@pytest.mark.parametrize("source", ["spec", "environment"])
def test_a_run_folder_path_holding_a_secret_is_masked(source, tmp_path, monkeypatch):
    text = SPEC
    if source == "spec":
        text += f"vars: {{API_KEY: {SECRET}}}\n"
    else:
        monkeypatch.setenv("RLP_ROUND4_TOKEN", SECRET)
    spec = _spec(tmp_path, text)
    run_dir = tmp_path / SECRET / "run"
    run_dir.mkdir(parents=True)  # not a run folder: the error line quotes its path
    line = exit_2_in_one_line(
        _invoke("train", str(spec), "--resume", str(run_dir)), "not a run folder"
    )
    assert SECRET not in line and f"{tmp_path}/***/run" in line


def _alias_bomb() -> str:
    """~800 bytes: 57 x 57 x 57 = 185,193 leaves, under the old 200,000-value bound."""
    leaves = ", ".join(["x"] * 57)
    middle = ", ".join(["*a1"] * 57)
    top = ", ".join(["*a2"] * 57)
    return f"vars:\n  a1: &a1 [{leaves}]\n  a2: &a2 [{middle}]\n  a3: [{top}]\n"


def test_a_small_alias_bomb_is_refused_quickly_naming_the_file_and_the_bound(tmp_path):
    bomb = _alias_bomb()
    assert 700 <= len(bomb) <= 900
    started = time.process_time()
    with pytest.raises(YamlLimitError, match=f"more than {MAX_ALIAS_VALUES:,} values"):
        parse_yaml(bomb)
    assert time.process_time() - started < 0.5
    spec = _spec(tmp_path, SPEC + bomb)
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    exit_2_in_one_line(
        _invoke("validate", str(spec)), str(spec), f"{MAX_ALIAS_VALUES:,}", "aliases"
    )
    assert time.process_time() - started < 4.0  # 19 s once, and 450 MB
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before < 100_000  # KiB


def test_ordinary_aliases_and_merge_keys_still_load():
    text = "base: &b {lr: 0.1, gamma: 0.9}\nother: {<<: *b, lr: 0.2}\nboth: [*b, *b]\n"
    data = parse_yaml(text)
    assert data["other"] == {"lr": 0.2, "gamma": 0.9} and data["both"] == [data["base"]] * 2


def test_train_from_another_thread_runs_without_signal_handlers(ray_local, tmp_path):
    from rl_platform.run.train import train
    from rl_platform.spec import load_spec

    spec = load_spec(_spec(tmp_path), overrides=TINY)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = train(spec, out_dir=tmp_path / "runs")
        except BaseException as exc:  # reported by the assertion below
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=300)
    assert "error" not in outcome, repr(outcome.get("error"))
    result = outcome["result"]
    assert result.iterations == 1  # type: ignore[attr-defined]
    assert json.loads((result.run_dir / "metrics.jsonl").read_text())["iteration"] == 1  # type: ignore[attr-defined]
    assert {sig: signal.getsignal(sig) for sig in handlers} == handlers
