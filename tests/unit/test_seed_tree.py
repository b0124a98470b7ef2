"""The seed tree keeps the seeds the platform derived before it gathered them in one place."""

from rl_platform.base.seed_tree import SeedTree, seed_for_copy


class _EnvContext(dict):
    """RLlib's EnvContext: a dict with the copy's indices as attributes."""

    def __init__(self, data: dict, *, worker_index: int, vector_index: int) -> None:
        super().__init__(data)
        self.worker_index, self.vector_index = worker_index, vector_index


def test_env_copies_are_spread_by_runner_and_vector_index():
    tree = SeedTree(7)
    assert tree.env_copy(worker=0, vector=0) == 7
    assert tree.env_copy(worker=2, vector=3) == 7 + 2 * 1000 + 3
    assert tree.runner(2) == tree.env_copy(worker=2, vector=0)
    assert SeedTree(None).env_copy(worker=2, vector=3) is None


def test_seed_for_copy_reads_rllibs_env_context():
    assert seed_for_copy(_EnvContext({"seed": 5}, worker_index=1, vector_index=2)) == 1007
    assert seed_for_copy({"seed": 5}) == 5  # the driver's plain dict
    assert seed_for_copy(_EnvContext({}, worker_index=1, vector_index=2)) is None


def test_tool_and_run_seeds_keep_their_values():
    tree = SeedTree(11)
    assert [tree.episode(i) for i in range(3)] == [11, 12, 13]
    assert [tree.seat_order(p) for p in (0, 1)] == [11, 12]
    assert tree.seating(2) == 11 + 2 * 7919
    assert tree.arena_actions() == 12
    assert tree.learner(1) == 12
    assert tree.runner_plan(worker=3, version=4) == [11, 3, 4]
    assert (tree.league(), SeedTree(None).league(), SeedTree(None).learner(2)) == (11, 0, 2)
