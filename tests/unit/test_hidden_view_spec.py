"""`env.hide` names the duel's features in both halves, and the run's saved spec keeps the
view, so a reloaded policy sees what it trained on (no Ray)."""

import yaml

from rl_platform.envs.duel.observation import HALF_SIZE, Obs
from rl_platform.envs.hidden_view import feature_names_of
from rl_platform.spec import load_spec, validate_spec_data


def test_each_duel_feature_names_its_columns_in_both_halves() -> None:
    named = feature_names_of("rlp/Duel-v0")
    assert named["hp"] == (Obs.HP, HALF_SIZE + Obs.HP)
    assert len(named["mode_one_hot"]) == 16  # 8 modes per half
    assert set(named) == {feature.name.lower() for feature in Obs}


def test_the_saved_spec_keeps_the_hidden_view(tmp_path) -> None:
    spec = validate_spec_data(
        {
            "name": "hidden",
            "env": {"id": "rlp/Duel-v0", "hide": ["hp", "stocks"]},
            "stop": {"iterations": 1},
        }
    )
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec.dump()))
    reloaded = load_spec(path).env.hidden_view()
    assert reloaded == spec.env.hidden_view()
    assert reloaded.columns == (Obs.HP, Obs.STOCKS, HALF_SIZE + Obs.HP, HALF_SIZE + Obs.STOCKS)
