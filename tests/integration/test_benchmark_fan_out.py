"""`benchmarks/common/fan_out.py`: the jobs of `opponent_encoder_value.py --parallel` run as Ray
tasks; each outcome comes back under its key, and a failed job does not stop the others."""

import pytest
import ray

from benchmarks.common.fan_out import fan_out


def _square_or_fail(value: int, *, fail: bool = False) -> int:
    if fail:
        raise ValueError(f"job {value} failed on purpose")
    return value * value


@pytest.mark.timeout(120)
def test_each_job_returns_under_its_key_and_a_failure_stays_its_own(ray_local):
    jobs = {
        ("seed", 2): ((2,), {}),
        ("seed", 3): ((3,), {"fail": True}),
        ("seed", 4): ((4,), {}),
    }
    outcomes = dict(fan_out(_square_or_fail, jobs, num_cpus=1))
    assert outcomes[("seed", 2)] == 4 and outcomes[("seed", 4)] == 16
    failure = outcomes[("seed", 3)]
    assert isinstance(failure, ray.exceptions.RayTaskError)
    assert "job 3 failed on purpose" in str(failure)
