"""``torch.nn.utils.stateless``: the deprecated home of ``functional_call``."""
import warnings

from ...func import functional_call as _functional_call

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """:func:`ember.func.functional_call` after torch's FutureWarning: ``module`` called with
    ``parameters_and_buffers`` (a dict name → tensor) in place of its own for this call.

    Source: https://pytorch.org/docs/stable/generated/torch.nn.utils.stateless.functional_call.html
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
