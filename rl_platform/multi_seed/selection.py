"""What `--seeds` means: `3` is a count (the spec's `seed`, +1, +2), `0,4,7` a list of seeds.

A single seed is a plain run (`rlp train SPEC --set seed=7`), so a count or a list names at
least `MIN_SEEDS`; `MAX_SEEDS` keeps a typo (`--seeds 1000`) from queueing a thousand runs.
"""

from dataclasses import dataclass

from rl_platform.base.errors import UserError

MIN_SEEDS, MAX_SEEDS = 2, 100


@dataclass(frozen=True)
class SeedSelection:
    """Parsed `--seeds`: either `count` seeds from the spec's own, or the `listed` ones."""

    count: int | None = None
    listed: tuple[int, ...] = ()

    def resolve(self, spec_seed: int | None) -> list[int]:
        """The seeds to train; a count starts at the spec's `seed` (0 when it is null)."""
        if self.count is None:
            return list(self.listed)
        start = spec_seed or 0
        return list(range(start, start + self.count))


def _seed(part: str, text: str) -> int:
    try:
        value = int(part.strip())
    except ValueError:
        raise UserError(
            f"--seeds {text!r}: {part.strip()!r} is not a whole number; give a count (3) or "
            "a comma-separated list (0,1,2)"
        ) from None
    if value < 0:
        raise UserError(f"--seeds {text!r}: seeds are >= 0, got {value}")
    return value


def parse_seeds(text: str) -> SeedSelection:
    """`3` -> a count, `0,4,7` -> those seeds; anything else is a `UserError` naming `--seeds`."""
    if "," not in text:
        count = _seed(text, text)
        if not MIN_SEEDS <= count <= MAX_SEEDS:
            raise UserError(
                f"--seeds {text!r}: a count of {MIN_SEEDS} to {MAX_SEEDS} seeds (one seed: "
                "`--set seed=N`)"
            )
        return SeedSelection(count=count)
    listed = tuple(_seed(part, text) for part in text.split(","))
    duplicates = sorted({seed for seed in listed if listed.count(seed) > 1})
    if duplicates:
        raise UserError(f"--seeds {text!r}: seed(s) {duplicates} listed twice")
    if not MIN_SEEDS <= len(listed) <= MAX_SEEDS:
        raise UserError(f"--seeds {text!r}: list {MIN_SEEDS} to {MAX_SEEDS} seeds")
    return SeedSelection(listed=listed)
