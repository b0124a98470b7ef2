"""The duel's two test sets of issue #43 and how a hidden-intent game is split (no Ray).

* the **hidden-intent set**: opponents whose plan the current frame does not show, `counter`
  (with its giveaways, both players' HP, shield and stocks, hidden from the learner:
  `GIVEAWAYS`, the spec's `env.hide`); `shifter` can be added, but its plans turned out to be
  answerable without memory (`HIDDEN_INTENT`);
* the **open styles**: `based`, `rusher`, `blocker`, `zoner`, which show who they are in
  every frame (docs/duel.md, after the cross table).

`SPLITS` measures an agent against each hidden-intent opponent per hidden value (`counter`'s
blind spot, `shifter`'s plan): `benchmarks/duel_hidden_intent.py` finds the memoryless
ceiling with it, `benchmarks/common/style_arena.py` splits a trained policy's games.

    from benchmarks.common.hidden_intent import GIVEAWAYS, HIDDEN_INTENT, OPEN_STYLES, SPLITS
"""

from collections.abc import Callable

from rl_platform.envs.duel.counter import wins_by_blind_spot
from rl_platform.envs.duel.shifter import wins_by_plan

HIDDEN_INTENT = ("counter",)
"""The default hidden-intent set. `shifter` (in `SPLITS`, `--hidden-intent counter shifter`)
is not in it: one memoryless responder, `answerer`, beats all three of its plans from the
frame (0.98, its ceiling equals knowing the plan; docs/duel.md), so it cannot show memory."""
OPEN_STYLES = ("based", "rusher", "blocker", "zoner")
GIVEAWAYS = ("hp", "shield", "stocks")
"""What `counter`'s frame keeps of earlier exchanges (a punished attack cost HP, shield or a
stock): hidden from the learner, so only its memory can tell the blind spot."""

Split = Callable[..., dict[str, float]]
"""`split(make_agent, *, games, seed)`: the agent's win rate in the games of each hidden
value, `games` games from each seat."""
SPLITS: dict[str, Split] = {
    "counter": lambda make_agent, **kw: {
        mode.name.lower(): win for mode, win in wins_by_blind_spot(make_agent, **kw).items()
    },
    "shifter": wins_by_plan,
}
