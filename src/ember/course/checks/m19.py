"""Module 19, benchmarking: a Measurement's median, mean and interquartile range, against
torch.utils.benchmark's Measurement on the same block times."""
import numpy as np
from torch.utils.benchmark.utils.common import Measurement as TorchMeasurement, TaskSpec as TorchTask

from ember.utils.benchmark.common import Measurement, TaskSpec

from . import check, close


@check("19/measurement-stats", points=2)
def measurement_stats():
    rng = np.random.default_rng(19)
    for times in ([1.0], [3.0, 1.0], list(rng.uniform(1, 2, 7)), list(rng.exponential(1, 40))):
        ours = Measurement(2, times, TaskSpec("x", "pass"))
        theirs = TorchMeasurement(2, times, TorchTask("x", "pass"))
        for name in ("median", "mean", "iqr"):
            close(f"Measurement(number_per_run=2, raw_times).{name}", getattr(ours, name),
                  getattr(theirs, name), rtol=1e-12, atol=0, input=np.array(times))
