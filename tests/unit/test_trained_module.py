"""One rule says which module of a checkpoint (or learner group) is the trained one."""

from rl_platform.base.module_ids import trained_module_ids, trained_module_in


def test_the_trained_module_is_found_among_league_members():
    assert trained_module_in(["league_slot_0", "main", "scripted_based"]) == "main"
    assert trained_module_in({"default_policy": {}}) == "default_policy"
    assert trained_module_in(["league_slot_0"]) is None
    assert trained_module_in(["league_slot_0"], fallback_to_first=True) == "league_slot_0"
    assert trained_module_in([], fallback_to_first=True) is None


def test_a_spec_trains_main_in_multi_agent_envs_and_rllibs_default_module_otherwise():
    assert trained_module_ids(multi_agent=True) == ("main",)
    assert trained_module_ids(multi_agent=False) == ("default_policy",)
