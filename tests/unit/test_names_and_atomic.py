import pytest

from rl_platform.base.errors import UnsafePathError
from rl_platform.utils.atomic import atomic_directory, write_text_atomic
from rl_platform.utils.names import check_name, safe_join


@pytest.mark.parametrize("bad", ["../x", "a/b", "..", ".", "/abs", "a\x00b", "", "-flag", "a b"])
def test_unsafe_names_rejected(bad):
    with pytest.raises(UnsafePathError):
        check_name(bad)


@pytest.mark.parametrize("good", ["main", "main_v3", "opponent_0", "cartpole-ppo.v2", "a+1"])
def test_safe_names_pass(good):
    assert check_name(good) == good


def test_safe_join_stays_inside(tmp_path):
    assert safe_join(tmp_path, "a", "b") == tmp_path.resolve() / "a" / "b"
    with pytest.raises(UnsafePathError):
        safe_join(tmp_path, "..")


def test_atomic_text_write_replaces_whole_file(tmp_path):
    target = tmp_path / "f.txt"
    write_text_atomic(target, "one")
    write_text_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_atomic_directory_discards_on_error(tmp_path):
    final = tmp_path / "ckpt"
    with pytest.raises(RuntimeError), atomic_directory(final) as tmp:
        (tmp / "part").write_text("half")
        raise RuntimeError("boom")
    assert not final.exists() and list(tmp_path.iterdir()) == []
