"""Self-play league: pool, matchmaking, PFSP, opponent slots, ratings, snapshots.

Plain Python (numpy, torch, pyarrow, openskill); nothing here imports Ray, so league rules are
unit-testable on their own. The RLlib adapter lives in `rl_platform.rllib.league_callback`.

Exports resolve lazily (PEP 562) so that importing the spec schema, which needs only
`rl_platform.spec.league`, does not pull in torch and keeps `rlp validate` fast.
"""

import importlib
from typing import Any

_EXPORTS = {
    "IterationReport": "rl_platform.league.league",
    "LeaderboardRow": "rl_platform.league.leaderboard",
    "League": "rl_platform.league.league",
    "LeagueMismatchError": "rl_platform.league.state",
    "LeaguePool": "rl_platform.league.pool",
    "LeagueSpec": "rl_platform.spec.league",
    "LeagueState": "rl_platform.league.state",
    "FolderStorage": "rl_platform.storage.folder_storage",
    "MAIN_ID": "rl_platform.league.league",
    "Matchmaker": "rl_platform.league.matchmaking",
    "MatchmakingMode": "rl_platform.league.matchmaking",
    "MatchupMatrix": "rl_platform.league.leaderboard",
    "Member": "rl_platform.league.members",
    "MemberKind": "rl_platform.league.members",
    "OpponentChoice": "rl_platform.league.slots",
    "Outcome": "rl_platform.league.results",
    "PfspWeighting": "rl_platform.league.matchmaking",
    "Rating": "rl_platform.league.ratings",
    "ResultBook": "rl_platform.league.results",
    "RolesSpec": "rl_platform.spec.league",
    "SELF_PLAY": "rl_platform.spec.league",
    "SlotAssignment": "rl_platform.league.slots",
    "SlotPlan": "rl_platform.league.slots",
    "UNPLAYED_WIN_PROB": "rl_platform.league.matchmaking",
    "assign_slots": "rl_platform.league.slots",
    "draw_from": "rl_platform.league.matchmaking",
    "f_hard": "rl_platform.league.matchmaking",
    "f_var": "rl_platform.league.matchmaking",
    "leaderboard": "rl_platform.league.leaderboard",
    "learner_ids_for": "rl_platform.league.league",
    "matchup_matrix": "rl_platform.league.leaderboard",
    "module_id_for_member": "rl_platform.league.slots",
    "module_id_for_scripted": "rl_platform.league.slots",
    "module_id_for_slot": "rl_platform.league.slots",
    "normalize_mix": "rl_platform.league.matchmaking",
    "ordinal": "rl_platform.league.ratings",
    "pfsp_weights": "rl_platform.league.matchmaking",
    "plan_slots": "rl_platform.league.slots",
    "rate_game": "rl_platform.league.ratings",
    "sample_opponent": "rl_platform.league.slots",
    "serialize_weights": "rl_platform.league.pool",
    "should_snapshot": "rl_platform.league.snapshots",
    "slot_for_module_id": "rl_platform.league.slots",
    "spec_learners": "rl_platform.league.league",
    "tournament_schedule": "rl_platform.league.leaderboard",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rl_platform.league' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
