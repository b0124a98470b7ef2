"""A patched call is installed once and runs its handlers in the declared order (no Ray)."""

import pytest

from rl_platform.utils.patched_call import PatchedCall, patch_call

ORDER = ("outer", "inner")


class Owner:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def method(self, value: int) -> int:
        self.calls.append("original")
        return value


def _noting(owner: Owner, name: str):
    def handler(call):
        def noted(*args, **kwargs):
            owner.calls.append(name)
            return call(*args, **kwargs) + 1

        return noted

    return handler


def test_handlers_run_in_the_declared_order_whoever_came_first() -> None:
    owner = Owner()
    patch_call(owner, "method", ORDER).set("inner", _noting(owner, "inner"))
    patch_call(owner, "method", ORDER).set("outer", _noting(owner, "outer"))
    assert owner.method(1) == 3
    assert owner.calls == ["outer", "inner", "original"]


def test_the_patch_is_installed_once_and_a_handler_set_again_replaces_itself() -> None:
    owner = Owner()
    first = patch_call(owner, "method", ORDER)
    first.set("outer", _noting(owner, "first clock"))
    second = patch_call(owner, "method", ORDER)
    second.set("outer", _noting(owner, "second clock"))  # a resumed loop's new clock
    assert second is first and isinstance(owner.method, PatchedCall)
    assert first.handlers() == ["outer"]
    assert owner.method(1) == 2
    assert owner.calls == ["second clock", "original"]


def test_an_unknown_handler_or_another_order_is_refused() -> None:
    owner = Owner()
    patched = patch_call(owner, "method", ORDER)
    with pytest.raises(ValueError, match="'other' is not one of"):
        patched.set("other", _noting(owner, "other"))
    with pytest.raises(ValueError, match="is patched with"):
        patch_call(owner, "method", ("inner", "outer"))


def test_without_handlers_the_original_runs() -> None:
    owner = Owner()
    patch_call(owner, "method", ORDER)
    assert owner.method(5) == 5 and owner.calls == ["original"]
