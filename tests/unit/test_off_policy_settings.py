"""What the off-policy array learner reads of a SAC spec's critic loss."""

import pytest

from rl_platform.base.errors import SpecError
from rl_platform.rllib.facts import run_facts
from rl_platform.rllib.off_policy_settings import learner_settings
from rl_platform.spec import validate_spec_data


def _sac_spec(**training):
    data = {"name": "sac", "algo": "SAC", "env": {"id": "Pendulum-v1"}}
    return validate_spec_data(data | {"training": {"algo": "SAC", **training}})


def test_sac_regresses_its_critics_on_the_papers_squared_error_by_default():
    spec = _sac_spec()
    assert learner_settings(spec, facts=run_facts(spec)).sac.critic_loss == "mse"


def test_rllibs_huber_is_one_setting_away():
    spec = _sac_spec(critic_loss="huber")
    assert learner_settings(spec, facts=run_facts(spec)).sac.critic_loss == "huber"


def test_an_unknown_critic_loss_is_refused_naming_the_field():
    with pytest.raises(SpecError, match=r"training\.critic_loss: 'l1'"):
        _sac_spec(critic_loss="l1")
