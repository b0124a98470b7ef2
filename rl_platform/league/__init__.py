"""Self-play league: pool, matchmaking, PFSP, opponent slots, ratings, snapshots.

Plain Python (numpy, torch, pyarrow, openskill); nothing here imports Ray, so league rules are
unit-testable on their own. The RLlib adapter lives in `rl_platform.league.callback`.
"""

from rl_platform.league.leaderboard import (
    LeaderboardRow,
    MatchupMatrix,
    leaderboard,
    matchup_matrix,
    tournament_schedule,
)
from rl_platform.league.league import (
    MAIN_ID,
    IterationReport,
    League,
    learner_ids_for,
    spec_learners,
)
from rl_platform.league.matchmaking import (
    SELF_PLAY,
    UNPLAYED_WIN_PROB,
    Matchmaker,
    MatchmakingMode,
    PfspWeighting,
    draw_from,
    f_hard,
    f_var,
    normalize_mix,
    pfsp_weights,
)
from rl_platform.league.members import Member, MemberKind
from rl_platform.league.pool import LeaguePool, serialize_weights
from rl_platform.league.ratings import Rating, ordinal, rate_game
from rl_platform.league.results import Outcome, ResultBook
from rl_platform.league.slots import (
    OpponentChoice,
    SlotAssignment,
    SlotPlan,
    assign_slots,
    module_id_for_member,
    module_id_for_scripted,
    module_id_for_slot,
    plan_slots,
    sample_opponent,
    slot_for_module_id,
)
from rl_platform.league.snapshots import should_snapshot
from rl_platform.league.spec import LeagueSpec, RolesSpec
from rl_platform.league.state import LeagueMismatchError, LeagueState
from rl_platform.league.storage import LeagueStorage

__all__ = [
    "MAIN_ID",
    "SELF_PLAY",
    "UNPLAYED_WIN_PROB",
    "IterationReport",
    "LeaderboardRow",
    "League",
    "LeagueMismatchError",
    "LeaguePool",
    "LeagueSpec",
    "LeagueState",
    "LeagueStorage",
    "Matchmaker",
    "MatchmakingMode",
    "MatchupMatrix",
    "Member",
    "MemberKind",
    "OpponentChoice",
    "Outcome",
    "PfspWeighting",
    "Rating",
    "ResultBook",
    "RolesSpec",
    "SlotAssignment",
    "SlotPlan",
    "assign_slots",
    "draw_from",
    "f_hard",
    "f_var",
    "leaderboard",
    "learner_ids_for",
    "matchup_matrix",
    "module_id_for_member",
    "module_id_for_scripted",
    "module_id_for_slot",
    "normalize_mix",
    "ordinal",
    "pfsp_weights",
    "plan_slots",
    "rate_game",
    "sample_opponent",
    "serialize_weights",
    "should_snapshot",
    "slot_for_module_id",
    "spec_learners",
    "tournament_schedule",
]
