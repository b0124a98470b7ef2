"""Child-process scenarios that run beside the rest of the suite.

A few tests mostly wait on processes of their own (a simulated autoscaling cluster, an
`rlp train` on the console, a Ray head with token auth): the test process sits idle while they
start Ray and import torch, one core each. Most of the suite trains in-process and keeps about
one of the 2 cores busy, so these scenarios start in one background thread with the session's
first test, one after another, and the tests that check them run last (tests/conftest.py moves
them); by then most scenarios have finished. The tests assert on a scenario's result exactly as
they would on a run of their own.

A test module lists its scenarios in `BACKGROUND` and reads one through the `background`
fixture: `background.result(SCENARIO)`. A scenario gets its own folder and a copy of the
environment taken when the session started: tests in the foreground change `os.environ`
(monkeypatch, `client_env`) and the working directory, so a scenario reads neither and gives
its children an explicit `cwd`. The session waits for the running scenario before it ends,
on Ctrl+C too, so that every scenario stops the processes it started.
"""

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

T = TypeVar("T")
MODULE_ATTRIBUTE = "BACKGROUND"


@dataclass(frozen=True)
class Scenario(Generic[T]):
    name: str
    """Names the scenario's folder; unique in the suite."""
    start: Callable[[Path, dict[str, str]], contextlib.AbstractContextManager[T]]
    """`start(folder, env)`: a context entered in the background, whose value the tests check;
    left when the session ends, where it stops whatever it kept running (a Ray head)."""

    @classmethod
    def run_once(cls, name: str, run: Callable[[Path, dict[str, str]], T]) -> "Scenario[T]":
        """A scenario whose processes have all ended when `run(folder, env)` returns."""
        return cls(name, lambda folder, env: contextlib.nullcontext(run(folder, env)))


def scenarios_of(items: Iterable[pytest.Item]) -> list[Scenario[Any]]:
    """The scenarios of the selected tests' modules, in the order their tests run."""
    found: dict[str, Scenario[Any]] = {}
    for item in items:
        module = getattr(item, "module", None)
        for scenario in getattr(module, MODULE_ATTRIBUTE, ()):
            found.setdefault(scenario.name, scenario)
    return list(found.values())


def _has_scenarios(item: pytest.Item) -> bool:
    return bool(getattr(getattr(item, "module", None), MODULE_ATTRIBUTE, ()))


def move_background_tests_last(items: list[pytest.Item]) -> None:
    """Put the tests of modules with scenarios after all others, each group in its order."""
    items.sort(key=_has_scenarios)  # stable: the order within each group is kept


class Background:
    """Enters scenarios one at a time in a worker thread; `result` waits for one."""

    def __init__(self, scenarios: list[Scenario[Any]], *, folder: Path, env: dict[str, str]):
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scenario")
        self._entered = contextlib.ExitStack()  # used by the worker thread until close()
        self._futures: dict[str, Future[Any]] = {}
        for scenario in scenarios:
            scenario_folder = folder / scenario.name
            scenario_folder.mkdir(parents=True)
            self._futures[scenario.name] = self._executor.submit(
                self._enter, scenario, scenario_folder, dict(env)
            )

    def _enter(self, scenario: Scenario[T], folder: Path, env: dict[str, str]) -> T:
        return self._entered.enter_context(scenario.start(folder, env))

    def result(self, scenario: Scenario[T]) -> T:
        """The scenario's result, once it has finished; its exception if it failed."""
        return self._futures[scenario.name].result()

    def close(self) -> None:
        """Drop the scenarios not started yet, wait for the running one, leave them all."""
        try:
            self._executor.shutdown(wait=True, cancel_futures=True)
        finally:
            self._entered.close()


@pytest.fixture(scope="session", autouse=True)
def background(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[Background]:
    """Starts the selected tests' scenarios with the session's first test."""
    runner = Background(
        scenarios_of(request.session.items),
        folder=tmp_path_factory.mktemp("background"),
        env={k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"},
    )
    try:
        yield runner
    finally:
        runner.close()
