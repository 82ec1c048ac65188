"""Module 15, quantization: a MinMaxObserver's scale and zero point, against torch's."""
import numpy as np
import torch

import ember
from ember.ao.quantization import observer as ember_observer

from . import check, close


@check("15/minmax-qparams", points=3)
def minmax_qparams():
    rng = np.random.default_rng(15)
    cases = [(rng.standard_normal((4, 5)) * 3, {}), (rng.uniform(1, 2, (6,)), {}),
             (rng.uniform(-3, -1, (6,)), {"dtype": "qint8"}),
             (rng.standard_normal((3, 4)), {"qscheme": "per_tensor_symmetric", "dtype": "qint8"}),
             (rng.standard_normal((3, 4)), {"qscheme": "per_tensor_symmetric"}),
             (np.zeros((2, 2)), {}), (rng.standard_normal((3, 4)), {"reduce_range": True})]
    for values, options in cases:
        x = values.astype(np.float32)
        kw_torch = {k: getattr(torch, v) if isinstance(v, str) else v for k, v in options.items()}
        kw_ember = {k: getattr(ember, v) if isinstance(v, str) else v for k, v in options.items()}
        ours = ember_observer.MinMaxObserver(**kw_ember)
        theirs = torch.ao.quantization.MinMaxObserver(**kw_torch)
        ours(ember.tensor(x))
        theirs(torch.tensor(x))
        (s, z), (ts, tz) = ours.calculate_qparams(), theirs.calculate_qparams()
        what = f"MinMaxObserver({', '.join(f'{k}={v}' for k, v in options.items())}).calculate_qparams()"
        close(f"{what} scale", s, ts, rtol=1e-6, atol=0, input=x)
        close(f"{what} zero_point", z, tz, input=x)
