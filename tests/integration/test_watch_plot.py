"""`rlp watch` (GIF, MP4, text) and `rlp plot` (learning curves, league ratings).

Pictures and videos are read back: GIFs with Pillow (size, frames, total duration), MP4s with
OpenCV (size, frame count), PNGs with Pillow (size, and that the curves drew coloured pixels).
"""

import json
from pathlib import Path

import cv2
import numpy as np
import pygame
import pytest
from PIL import Image

from tests.integration.cli_support import invoke_rlp as rlp


def gif_facts(path: Path) -> tuple[tuple[int, int], int, int]:
    """(size, stored frames, total duration in ms) of a GIF."""
    with Image.open(path) as image:
        durations = []
        for index in range(image.n_frames):
            image.seek(index)
            durations.append(image.info["duration"])
        return image.size, image.n_frames, sum(durations)


def test_watch_cartpole_checkpoint_to_gif(
    cartpole_run: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # CartPole draws with pygame: `pygame.init()` probes SDL's video drivers anew, and without
    # a desktop session the default probe writes an XDG_RUNTIME_DIR error to fd 2.
    monkeypatch.delenv("SDL_VIDEODRIVER", raising=False)
    pygame.quit()
    out = tmp_path / "cartpole.gif"
    result = json.loads(
        rlp(
            "watch", f"checkpoint://{cartpole_run}", "--episodes", "2", "--max-steps", "12",
            "--out", str(out), "--json",
        ).stdout
    )  # fmt: skip
    lengths = [episode["length"] for episode in result["episodes"]]
    assert len(lengths) == 2 and all(0 < n <= 12 for n in lengths)
    assert result["frames"] == sum(n + 1 for n in lengths)  # reset frame + one per step
    size, stored, total_ms = gif_facts(out)
    assert size == (600, 400) and result["video"]["width"] == 600 and result["fps"] == 50
    # Pillow may merge identical consecutive frames, but never loses playback time.
    assert 2 <= stored <= result["frames"] and total_ms == result["frames"] * 20
    with Image.open(out) as image:
        image.seek(stored // 2)
        pixels = np.asarray(image.convert("RGB"))
    assert pixels.std() > 10  # a drawn cart and pole, not a blank frame
    assert "XDG_RUNTIME_DIR" not in capfd.readouterr().err


def test_watch_duel_to_mp4_is_upscaled(tmp_path: Path) -> None:
    out = tmp_path / "duel.mp4"
    result = json.loads(
        rlp(
            "watch", "scripted://duel/based", "--env", "duel", "--max-steps", "30",
            "--out", str(out), "--json",
        ).stdout
    )  # fmt: skip
    assert result["frames"] == 31 and result["fps"] == 20
    capture = cv2.VideoCapture(str(out))
    try:
        frames = []
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            frames.append(frame)
    finally:
        capture.release()
    assert len(frames) == 31
    assert frames[0].shape == (256, 512, 3)  # 128x256 rendered, upscaled 2x to >= 480 px
    assert frames[0].std() > 5


def test_watch_duel_as_text_and_max_frames(tmp_path: Path) -> None:
    text = rlp("watch", "random", "--env", "duel", "--text", "--max-steps", "4").stdout
    assert text.count("player_0: hp=") == 5 and text.count("t=4/") == 1
    assert "#" in text  # the stage
    out = tmp_path / "capped.gif"
    capped = json.loads(
        rlp("watch", "random", "--env", "duel", "--out", str(out), "--max-frames", "7",
            "--scale", "1", "--json").stdout
    )  # fmt: skip
    assert capped["frames"] == 7 and capped["stopped_at_max_frames"] is True
    assert gif_facts(out)[0] == (256, 128)


def test_watch_mujoco_renders_headless(tmp_path: Path) -> None:
    out = tmp_path / "pendulum.gif"
    result = json.loads(
        rlp(
            "watch", "random", "--env", "InvertedPendulum-v5", "--max-steps", "3",
            "--out", str(out), "--fps", "25", "--json",
        ).stdout
    )  # fmt: skip
    size, _, total_ms = gif_facts(out)
    assert size == (480, 480) and total_ms == result["frames"] * 40


def test_watch_errors(tmp_path: Path) -> None:
    cases = [
        (("random", "--env", "CartPole-v1"), "exactly one of"),
        (("random", "--env", "CartPole-v1", "--out", str(tmp_path / "x.avi")), ".gif or .mp4"),
        (("random", "--env", "CartPole-v1", "--text"), "does not render text"),
        (("random", "--env", "CartPole-v1", "--out", str(tmp_path / "no" / "x.gif")), "folder"),
    ]
    for args, message in cases:
        assert message in rlp("watch", *args, code=2).stderr, args


def _fake_run(root: Path, *, name: str, returns: list[float], steps: list[int]) -> Path:
    root.mkdir(parents=True)
    (root / "spec.yaml").write_text(f"name: {name}\nenv:\n  id: CartPole-v1\n")
    rows = [
        {"iteration": i + 1, "env_steps": s, "train/episode_return_mean": r}
        for i, (s, r) in enumerate(zip(steps, returns, strict=True))
    ]
    (root / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root


def _coloured_pixels(path: Path) -> int:
    """Pixels clearly neither grey nor white (curves and bands, not axes or text)."""
    with Image.open(path) as image:
        rgb = np.asarray(image.convert("RGB")).astype(int)
    return int(((rgb.max(axis=2) - rgb.min(axis=2)) > 60).sum())


def test_plot_groups_runs_by_spec_name(cartpole_run: Path, tmp_path: Path) -> None:
    seeds = [
        _fake_run(tmp_path / "a" / f"seed{i}", name="fake_ppo", returns=[10 + i, 30 + 5 * i],
                  steps=[0, 1000])
        for i in range(3)
    ]  # fmt: skip
    out = tmp_path / "curves.png"
    result = json.loads(
        rlp("plot", str(cartpole_run), *map(str, seeds), "--out", str(out), "--json").stdout
    )
    assert result["groups"] == {"cartpole_ppo": 1, "fake_ppo": 3}
    with Image.open(out) as image:
        assert image.size == (800, 500) and image.format == "PNG"
    assert _coloured_pixels(out) > 500
    # A parent folder is searched for runs; --band std draws a different picture.
    std_out = tmp_path / "std.png"
    std = json.loads(
        rlp("plot", str(tmp_path / "a"), "--band", "std", "--out", str(std_out), "--json").stdout
    )
    assert std["groups"] == {"fake_ppo": 3}
    assert not np.array_equal(np.asarray(Image.open(std_out)), np.asarray(Image.open(out)))


def test_plot_league_ratings_and_errors(cartpole_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "league_run"
    run.mkdir()
    rows = [
        {"env_steps": 1000 * i, "league/rating/main": 1.0 * i, "league/rating/main_exploiter_0": -i}
        for i in range(1, 5)
    ]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "ratings.png"
    result = json.loads(rlp("plot", "--league", str(run), "--out", str(out), "--json").stdout)
    assert result["members"] == {"main": 4, "main_exploiter_0": 4}
    with Image.open(out) as image:
        assert image.size == (800, 500)
    assert _coloured_pixels(out) > 200
    errors = [
        (("--league", str(cartpole_run)), "no league/rating/"),
        ((str(cartpole_run), "--metric", "train/nope"), "no run has values"),
        ((str(tmp_path / "missing"),), "does not exist"),
        ((str(cartpole_run), "--out", str(tmp_path / "x.jpg")), ".png"),
        ((), "at least one run folder"),
    ]
    for args, message in errors:
        assert message in rlp("plot", *args, code=2).stderr, args


def test_plot_a_seeds_folder_as_one_band_over_its_seeds(tmp_path: Path) -> None:
    # The folder `rlp train --seeds 3` leaves: seed_<N> run folders and the aggregate beside them.
    parent = tmp_path / "seeds" / "fake_ppo" / "20260101-000000"
    for seed in range(3):
        _fake_run(parent / f"seed_{seed}", name="fake_ppo", returns=[5 + seed, 20 + 10 * seed, 60],
                  steps=[0, 500 * (seed + 1), 3000])  # fmt: skip
    (parent / "trial_metrics.json").write_text('{"seeds": [0, 1, 2]}\n')
    pictures = {}
    for band in ("ci", "minmax"):
        pictures[band] = tmp_path / f"{band}.png"
        result = json.loads(
            rlp("plot", str(parent), "--band", band, "--out", str(pictures[band]), "--json").stdout
        )
        assert result["groups"] == {"fake_ppo": 3} and result["skipped"] == []
        assert _coloured_pixels(pictures[band]) > 500
    ci, minmax = (np.asarray(Image.open(pictures[b])) for b in ("ci", "minmax"))
    assert not np.array_equal(ci, minmax)  # the bootstrap band is narrower than min-max
    assert "use minmax, std, ci" in rlp("plot", str(parent), "--band", "iqr", code=2).stderr
