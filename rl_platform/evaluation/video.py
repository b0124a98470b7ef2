"""Frame writers for `rlp watch`: animated GIF (Pillow) and MP4 (OpenCV), fed one frame at a time.

GIF frames are quantized to a palette as they arrive (1 byte per pixel), so a long episode does
not hold full RGB frames in memory. GIF delays are in 1/100 s, so the frame time is rounded to
10 ms. Pillow merges consecutive identical frames into one longer frame: the playback time is
kept, the stored frame count can be lower than the number of frames added.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.utils.atomic import write_bytes_atomic

SUFFIXES = (".gif", ".mp4")


@dataclass(frozen=True)
class VideoInfo:
    path: Path
    frames: int
    """Frames added (rendered)."""
    width: int
    height: int
    frame_ms: int


class FrameWriter(Protocol):
    def add(self, frame: np.ndarray) -> None: ...

    def close(self) -> VideoInfo: ...


def frame_ms(fps: float) -> int:
    return max(10, round(1000.0 / fps / 10.0) * 10)


def check_frame(frame: object) -> np.ndarray:
    array = np.asarray(frame) if frame is not None else None
    if array is None or array.ndim != 3 or array.shape[2] != 3:
        shape = None if array is None else array.shape
        raise UserError(f"the env rendered {shape}, not an RGB frame [H, W, 3]")
    return np.ascontiguousarray(array, dtype=np.uint8)


def upscale(frame: np.ndarray, factor: int) -> np.ndarray:
    """Nearest-neighbour upscaling keeps pixel-art frames (the duel) sharp."""
    if factor == 1:
        return frame
    return frame.repeat(factor, axis=0).repeat(factor, axis=1)


class GifWriter:
    def __init__(self, path: Path, *, fps: float) -> None:
        self.path, self.frame_ms = path, frame_ms(fps)
        self._frames: list = []

    def add(self, frame: np.ndarray) -> None:
        from PIL import Image

        image = Image.fromarray(check_frame(frame), mode="RGB")
        self._frames.append(image.quantize(colors=256, method=Image.Quantize.MEDIANCUT))

    def close(self) -> VideoInfo:
        import io

        if not self._frames:
            raise UserError("no frames were rendered")
        first, rest = self._frames[0], self._frames[1:]
        buffer = io.BytesIO()
        first.save(
            buffer, format="GIF", save_all=True, append_images=rest,
            duration=self.frame_ms, loop=0, disposal=1,
        )  # fmt: skip
        write_bytes_atomic(self.path, buffer.getvalue())
        width, height = first.size
        return VideoInfo(self.path, len(self._frames), width, height, self.frame_ms)


class Mp4Writer:
    def __init__(self, path: Path, *, fps: float) -> None:
        self.path, self.fps = path, fps
        self._writer = None
        self._size: tuple[int, int] | None = None
        self._count = 0

    def add(self, frame: np.ndarray) -> None:
        import cv2

        frame = check_frame(frame)
        height, width = frame.shape[:2]
        if self._writer is None:
            fourcc = cv2.VideoWriter_fourcc(*"mp4v")
            self._writer = cv2.VideoWriter(str(self.path), fourcc, self.fps, (width, height))
            if not self._writer.isOpened():
                raise UserError(f"{self.path}: OpenCV cannot write MP4 (mp4v) here; use .gif")
            self._size = (width, height)
        elif (width, height) != self._size:
            raise UserError(f"frame size changed from {self._size} to {(width, height)}")
        self._writer.write(np.ascontiguousarray(frame[:, :, ::-1]))  # OpenCV wants BGR
        self._count += 1

    def close(self) -> VideoInfo:
        if self._writer is None:
            raise UserError("no frames were rendered")
        self._writer.release()
        width, height = self._size or (0, 0)
        return VideoInfo(self.path, self._count, width, height, frame_ms(self.fps))


def open_writer(path: Path, *, fps: float) -> FrameWriter:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UserError(f"--out {path}: use a .gif or .mp4 file name")
    if not path.parent.is_dir():
        raise UserError(f"--out {path}: folder {path.parent} does not exist")
    return GifWriter(path, fps=fps) if suffix == ".gif" else Mp4Writer(path, fps=fps)
