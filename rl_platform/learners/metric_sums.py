"""A step's metrics summed on the device and read by the host once per iteration.

An update step that logged `float(loss)` would wait for the device every step; here each
step adds its scalars into one `[len(keys)]` device tensor and counts itself on the host, and
the caller reads the means once (`read`), after the iteration's last step.
"""

import torch


class MetricSums:
    def __init__(self, keys: tuple[str, ...], *, device: torch.device | str) -> None:
        self.keys = keys
        self.sums = torch.zeros(len(keys), device=device)
        self.count = 0

    def add(self, values: dict[str, torch.Tensor]) -> None:
        """One step's scalars, by key (every key of `keys` must be there)."""
        # Under no_grad, and a reshape only where a value is not 0-d already: an op per
        # value would cost more than the sum itself on a tiny update (issue #57).
        with torch.no_grad():
            row = [values[key].float() for key in self.keys]
            self.sums += torch.stack([v if v.dim() == 0 else v.reshape(()) for v in row])
        self.count += 1

    def read(self) -> dict[str, float]:
        """The means since the last read (one host read), and start again; {} after no step."""
        if self.count == 0:
            return {}
        means = (self.sums / self.count).tolist()
        self.sums.zero_()
        self.count = 0
        return dict(zip(self.keys, means, strict=True))
