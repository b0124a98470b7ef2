"""Issue #59 A: `rlp`'s console sink (`utils/console_log.py`): the time and the message, the
level only where it is not INFO, the source only under `--verbose`; records bound
`OFF_CONSOLE` (the progress line under a live display) reach files only."""

import re
from collections.abc import Iterator

import pytest
from loguru import logger

from rl_platform.utils import console_log
from rl_platform.utils.console_log import (
    OFF_CONSOLE,
    console_log_is_ours,
    show_source_on_console,
    use_console_log,
)

SOURCE = re.compile(r"test_console_log:\w+:\d+")


@pytest.fixture
def ours() -> Iterator[None]:
    """Our console sink for one test (it replaces loguru's default one, as `rlp` does), then
    a stderr sink in loguru's default format and level in its place."""
    logger.remove()
    use_console_log()
    try:
        yield
    finally:
        logger.remove()
        console_log._console.update(handler=None, verbose=False, label="")
        logger.add(console_log._to_stderr, level="DEBUG")


def test_info_is_the_time_and_the_message(ours, capsys):
    logger.info("cartpole | iter {} | env steps {:,}", 2, 8024)
    err = capsys.readouterr().err
    assert re.fullmatch(r"\d\d:\d\d:\d\d cartpole \| iter 2 \| env steps 8,024\n", err), err


def test_other_levels_name_themselves_in_lower_case(ours, capsys):
    logger.warning("runner {} sampled nothing", 1)
    logger.error("it broke")
    logger.debug("not shown without --verbose")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2, err
    assert re.fullmatch(r"\d\d:\d\d:\d\d warning: runner 1 sampled nothing", err[0])
    assert re.fullmatch(r"\d\d:\d\d:\d\d error: it broke", err[1])


def test_verbose_shows_level_source_and_debug(ours, capsys):
    show_source_on_console()
    logger.info("with its source")
    logger.debug("and debug lines")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(SOURCE.search(line) for line in err), err
    assert "INFO" in err[0] and err[0].endswith("- with its source")


def test_a_record_bound_off_console_reaches_files_only(ours, capsys, tmp_path):
    log = tmp_path / "train.log"
    handle = logger.add(log, level="INFO")
    try:
        logger.bind(**{OFF_CONSOLE: True}).info("the live display shows it")
    finally:
        logger.remove(handle)
    assert capsys.readouterr().err == ""
    assert "the live display shows it" in log.read_text()
    assert SOURCE.search(log.read_text())  # the file keeps loguru's format, source included


def test_the_python_api_keeps_loguru_as_it_is():
    assert not console_log_is_ours()
    show_source_on_console()  # no sink of ours: nothing changes
    assert not console_log_is_ours()


def test_a_label_follows_the_time_on_every_line(ours, capsys):
    use_console_log(label="seed 1")  # a seed's trial of `rlp train --seeds`
    logger.info("cartpole | iter {}", 2)
    logger.warning("slow")
    show_source_on_console()
    logger.info("with its source")
    err = capsys.readouterr().err.splitlines()
    assert re.fullmatch(r"\d\d:\d\d:\d\d seed 1 \| cartpole \| iter 2", err[0]), err
    assert re.fullmatch(r"\d\d:\d\d:\d\d seed 1 \| warning: slow", err[1]), err
    assert err[2].startswith(err[2][:8] + " seed 1 | INFO") and SOURCE.search(err[2]), err
