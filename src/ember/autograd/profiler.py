"""``torch.autograd.profiler``: the profiler's older entry point, which programs written before
``torch.profiler`` (PyTorch 1.8) still use: ``with torch.autograd.profiler.profile() as prof``
and ``torch.autograd.profiler.record_function(name)``. Both are :mod:`ember.profiler`'s; this
module only maps the older constructor's arguments onto it
(https://pytorch.org/docs/stable/autograd.html#profiler). It is loaded on first use, so
autograd itself never depends on the profiler above it.
"""
from .. import profiler as _profiler
from ..profiler import EventList, FunctionEvent, ProfilerActivity, record_function

__all__ = ["profile", "record_function", "EventList", "FunctionEvent"]


class profile(_profiler.profile):
    """Records host (CPU) ops between ``__enter__`` and ``__exit__``, with the results API of
    :class:`ember.profiler.profile` (``key_averages().table()``, ``export_chrome_trace``).

    Args:
        enabled (bool): when False the block runs unprofiled, nothing is recorded and
            ``with ... as prof`` binds None, as in PyTorch.
        use_cuda, use_device, use_kineto, use_cpu, experimental_config: accepted for
            PyTorch compatibility; ember records host activity only (``use_cuda=True`` warns as
            :class:`ember.profiler.profile` does for CUDA activity).
        record_shapes, with_flops, profile_memory, with_stack, with_modules, acc_events,
        custom_trace_id_callback: as in :class:`ember.profiler.profile`.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        activities = [ProfilerActivity.CPU]
        if use_cuda:
            activities.append(ProfilerActivity.CUDA)
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules, acc_events=acc_events,
                         custom_trace_id_callback=custom_trace_id_callback)
        self.enabled = enabled

    def __enter__(self):
        # PyTorch's disabled profile binds ``as`` to None.
        return super().__enter__() if self.enabled else None

    def __exit__(self, *exc):
        return super().__exit__(*exc) if self.enabled else False
