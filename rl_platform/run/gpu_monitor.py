"""`perf/gpu_util` and `perf/gpu_mem_peak_gb` per iteration, when the driver uses CUDA.

- `perf/gpu_util`: the mean of NVML's utilization samples since the last report (the percent
  of time a kernel ran; the driver samples every 1/6 s to 1 s), read with
  `nvmlDeviceGetSamples`, so it covers the whole iteration rather than one instant. Where
  the sample buffer is not available, the instantaneous `nvmlDeviceGetUtilizationRates`.
- `perf/gpu_mem_peak_gb`: the peak of memory torch allocated in this process during the
  iteration (`torch.cuda.max_memory_allocated`): the local learner and an env runner that
  acts on the GPU in the driver; remote actors keep their own.

NVML comes from `nvidia-ml-py` (`pynvml`), which GPU images carry; without it only the
memory peak is reported.
"""

from typing import Any

import torch
from loguru import logger

GPU_UTIL_KEY = "perf/gpu_util"
GPU_MEM_PEAK_KEY = "perf/gpu_mem_peak_gb"
_GPU_UTILIZATION_SAMPLES = 1  # NVML_GPU_UTILIZATION_SAMPLES


class GpuMonitor:
    """Per-iteration GPU figures of the driver's CUDA device (module docstring)."""

    def __init__(self, device_index: int = 0) -> None:
        self.device_index = device_index
        self._nvml: Any = None
        self._handle: Any = None
        self._last_seen = 0
        self._open_nvml()
        torch.cuda.reset_peak_memory_stats(device_index)

    @classmethod
    def for_this_process(cls) -> "GpuMonitor | None":
        """A monitor when this process has CUDA, else None."""
        return cls() if torch.cuda.is_available() else None

    def _open_nvml(self) -> None:
        try:
            import pynvml  # nvidia-ml-py: optional, on GPU images

            pynvml.nvmlInit()
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(self.device_index)
            self._nvml = pynvml
        except Exception as exc:  # no library, no driver: report memory only
            logger.info("perf/gpu_util not reported: NVML unavailable ({})", exc)

    def read(self) -> dict[str, float]:
        """The figures since the previous `read` (or construction)."""
        out = {GPU_MEM_PEAK_KEY: torch.cuda.max_memory_allocated(self.device_index) / 1e9}
        torch.cuda.reset_peak_memory_stats(self.device_index)
        util = self._utilization()
        if util is not None:
            out[GPU_UTIL_KEY] = util
        return out

    def _utilization(self) -> float | None:
        if self._nvml is None:
            return None
        try:
            _, samples = self._nvml.nvmlDeviceGetSamples(
                self._handle, _GPU_UTILIZATION_SAMPLES, self._last_seen
            )
        except Exception:
            samples = []
        if samples:
            self._last_seen = max(s.timeStamp for s in samples)
            return sum(s.sampleValue.uiVal for s in samples) / len(samples)
        try:
            return float(self._nvml.nvmlDeviceGetUtilizationRates(self._handle).gpu)
        except Exception:
            return None
