"""Spec fields shown unmasked, which therefore may not hold a secret.

Masking works on what rl_platform writes about a spec (`spec.yaml`, logs, the W&B config), but
a few values are identities used as they are: `name` becomes the run folder's name, and
`logging.project` and `logging.tags` go to W&B, which writes them into the run folder's W&B
files and shows them to the whole team. Masking them would quietly change which folder or
project a run lands in, so a secret found in them (a `${vars.API_KEY}` interpolated into the
project, say) is refused instead, naming the field.
"""

from collections.abc import Iterable

from rl_platform.spec.experiment import ExperimentSpec


def secrets_shown(spec: ExperimentSpec, secrets: Iterable[str]) -> list[str]:
    """One problem line per shown field that holds one of `secrets`."""
    shown = {
        "name": [spec.name],
        "logging.project": [spec.logging.project],
        "logging.tags": list(spec.logging.tags),
    }
    known = [secret for secret in secrets if secret]
    return [
        f"{field}: holds a secret value (one under a secret key such as `API_KEY`, or a secret "
        "environment variable); it is shown unmasked (as a folder name or in W&B): use a plain "
        "value"
        for field, values in shown.items()
        if any(secret in value for value in values for secret in known)
    ]
