"""Ray's notices and errors go to the run's log file, not to the console; the dashboard
address becomes a URL. No Ray is started."""

import io
import logging
from pathlib import Path

import pytest
from ray._private.log import PlainRayHandler

from rl_platform.ray_runtime import worker_output
from rl_platform.ray_runtime.session import dashboard_line, dashboard_url, ray_logs_to


def test_ray_notices_and_errors_go_to_the_log_file_not_the_console(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RLP_TEST_TOKEN", "s3cret-value")  # a secret-looking name: masked
    # Ray's console handler keeps the stderr of import time, which pytest had replaced.
    screen = io.StringIO()
    for handler in logging.getLogger("ray").handlers:
        if isinstance(handler, PlainRayHandler):
            monkeypatch.setattr(handler, "stream", screen)
    log_file = tmp_path / "train.log"
    tune_logger = logging.getLogger("ray.tune.notice_test")  # propagates to Ray's `ray` handler
    with ray_logs_to(log_file):
        tune_logger.warning("Install gputil for GPU system monitoring.")
        logging.getLogger("ray.rllib.notice_test").warning("You are running PPO on the new API")
        tune_logger.error("a real failure (token s3cret-value)")
    tune_logger.warning("after the run")
    console = screen.getvalue()
    assert "gputil" not in console and "a real failure" not in console  # our line says it
    assert "after the run" in console  # Ray's console is as it was once the run ends
    text = log_file.read_text()
    assert "gputil" in text and "new API" in text and "a real failure (token ***)" in text
    assert "after the run" not in text and "s3cret-value" not in text


@pytest.mark.parametrize(
    ("address", "url"),
    [
        ("127.0.0.1:8265", "http://127.0.0.1:8265"),
        ("http://10.0.0.5:8265", "http://10.0.0.5:8265"),
        ("", None),  # Ray started without a dashboard
        (None, None),
    ],
)
def test_dashboard_address_becomes_a_url(address: str | None, url: str | None) -> None:
    assert dashboard_url(address) == url


def test_the_dashboard_line_says_where_the_token_comes_from_unless_auth_is_off():
    url = "http://127.0.0.1:8265"
    with_token = dashboard_line(url, {})
    assert with_token.startswith(f"Ray dashboard: {url} ")
    assert "`ray get-auth-token`" in with_token
    assert dashboard_line(url, {"RAY_AUTH_MODE": "token"}) == with_token
    assert dashboard_line(url, {"RAY_AUTH_MODE": "disabled"}) == f"Ray dashboard: {url}"


def test_a_seed_trials_lines_print_as_they_are_and_others_go_to_the_open_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed_by_ray = []
    handler = worker_output._routed(lambda batch, **_: printed_by_ray.append(batch))
    # Ray folds lines that differ only in numbers; the seeds' lines differ in just that.
    seeds = ["12:00:05 seed 0 | demo | iter 1", "12:00:05 seed 1 | demo | iter 1"]
    trial = {"actor_name": "seed_trainable", "pid": 7, "is_err": True, "lines": seeds}
    runner = {"actor_name": "SingleAgentEnvRunner", "pid": 8, "is_err": True, "lines": ["hi"]}
    log_file = tmp_path / "train.log"
    with ray_logs_to(log_file), worker_output.workers_on_console("seed_trainable"):
        handler(trial, ignore_prefix=False)
        handler(runner, ignore_prefix=False)
    assert capsys.readouterr().err.splitlines() == seeds
    assert printed_by_ray == []
    assert "(SingleAgentEnvRunner pid=8) hi" in log_file.read_text()
