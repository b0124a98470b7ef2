"""The module ids pure code spells as strings agree with RLlib's constants."""

from ray.rllib.core import DEFAULT_MODULE_ID

from rl_platform.base.module_ids import SINGLE_AGENT_MODULE_ID, TRAINED_MODULE_IDS


def test_single_agent_module_id_is_rllibs_default():
    assert SINGLE_AGENT_MODULE_ID == DEFAULT_MODULE_ID
    assert TRAINED_MODULE_IDS[0] == DEFAULT_MODULE_ID
