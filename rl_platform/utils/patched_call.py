"""A callable attribute replaced once, whose calls pass through named handlers in a set order.

Several parts of rl_platform wrap the same call of a Ray or RLlib object: the phase clock and
the shared-modules skip both wrap an env runner group's `sync_weights`, and the lost-raylet
guard and the worker-output router both wrap Ray's driver printer. Wrapping one another's
wrappers needed marks on the wrapped functions (which wrapper ran first, what to unwrap on a
resumed loop). Here the attribute is replaced once, by a `PatchedCall` that holds the
original and the handlers by name; the order is declared where the patch is (the seams,
rl_platform/ray_runtime/ray_internals.py and rllib_internals.py), so it does not depend on
who came first, and setting a handler again replaces it.

A handler is a decorator: it takes the next callable (the next handler's, or the original)
and returns its wrapped version.
"""

from collections.abc import Callable, Sequence
from typing import Any

Handler = Callable[[Callable[..., Any]], Callable[..., Any]]


class PatchedCall:
    """Stands in for `original`: each call runs the handlers set, in `order` (the first one
    outermost), then `original`. Pure Python; the chain is rebuilt when a handler is set."""

    def __init__(self, original: Callable[..., Any], order: Sequence[str]) -> None:
        self.original = original
        self.order = tuple(order)
        self._handlers: dict[str, Handler] = {}
        self._chain: Callable[..., Any] = original

    def set(self, name: str, handler: Handler) -> None:
        """Install `handler` as `name` (replacing one set before under that name)."""
        if name not in self.order:
            raise ValueError(f"handler {name!r} is not one of {self.order}")
        self._handlers[name] = handler
        chain = self.original
        for each in reversed(self.order):
            if each in self._handlers:
                chain = self._handlers[each](chain)
        self._chain = chain

    def handlers(self) -> list[str]:
        """The names of the handlers set, outermost first."""
        return [name for name in self.order if name in self._handlers]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._chain(*args, **kwargs)


def patch_call(owner: Any, attribute: str, order: Sequence[str]) -> PatchedCall:
    """`owner.attribute` as a `PatchedCall` with handlers in `order`: replaced the first time,
    the same object after that (`ValueError` if asked with another order)."""
    current = getattr(owner, attribute)
    if isinstance(current, PatchedCall):
        if current.order != tuple(order):
            raise ValueError(f"{attribute} is patched with {current.order}, not {tuple(order)}")
        return current
    patched = PatchedCall(current, order)
    setattr(owner, attribute, patched)
    return patched
