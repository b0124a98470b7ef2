"""Calling the `rlp` CLI in-process from tests."""

from typing import Any

from typer.testing import CliRunner

from rl_platform.cli import app


def invoke_rlp(*args: str, code: int = 0) -> Any:
    """Run `rlp ARGS` in-process and check its exit code (output in the assertion message)."""
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result
