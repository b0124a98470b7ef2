"""LeagueSpec validation messages."""

import pytest
from pydantic import ValidationError

from rl_platform.spec.league import LeagueSpec


def test_defaults_and_full_block() -> None:
    assert LeagueSpec().opponent_mix == {"self_play": 1.0}
    spec = LeagueSpec.model_validate(
        {
            "opponent_mix": {"self_play": 0.8, "based": 0.15, "constant": 0.05},
            "matchmaking": "pfsp",
            "pfsp_weighting": "variance",
            "pfsp_p": 3.0,
            "mix_pfsp": 0.5,
            "snapshot_every": 10,
            "snapshot_win_rate": 0.7,
            "win_rate_window": 50,
            "slots": 4,
            "max_snapshots": 20,
            "roles": {"main_exploiters": 1, "league_exploiters": 1},
            "scripted": ["based", "constant"],
        }
    )
    assert spec.roles.league_exploiters == 1
    with pytest.raises(ValidationError):
        spec.slots = 3  # frozen


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"opponent_mix": {"self_play": -0.1, "based": 1}}, "must be >= 0; negative"),
        ({"opponent_mix": {"self_play": 0}}, "must sum to > 0"),
        ({"opponent_mix": {}}, "opponent_mix is empty"),
        ({"opponent_mix": {"../x": 1}}, "not allowed in a path"),
        ({"matchmaking": "elo"}, "'uniform', 'latest' or 'pfsp'"),
        ({"snapshot_win_rate": 1.5}, "less than or equal to 1"),
        ({"mix_pfsp": 1.5}, "less than or equal to 1"),
        ({"mix_pfsp": -0.5}, "greater than or equal to 0"),
        ({"slots": 1, "roles": {"league_exploiters": 1}}, "slots=1 is too few"),
        ({"scripted": ["based", "based"]}, "more than once"),
        ({"slot": 4}, "Extra inputs are not permitted"),
        ({"roles": {"exploiters": 1}}, "Extra inputs are not permitted"),
    ],
)
def test_invalid_blocks_are_rejected_with_clear_messages(block: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        LeagueSpec.model_validate(block)


def test_every_field_has_a_description() -> None:
    for name, field in LeagueSpec.model_fields.items():
        assert field.description, name
