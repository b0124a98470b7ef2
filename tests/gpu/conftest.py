"""Tests that need a CUDA GPU: collected only where torch sees one (tests/conftest.py), and
marked `gpu`, so `uv run pytest -m gpu` on a GPU machine runs just these."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/gpu/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.gpu)
