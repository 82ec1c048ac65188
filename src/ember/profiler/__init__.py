"""The profiler (``torch.profiler``): what ran, for how long, on which shapes.

``with ember.profiler.profile() as prof:`` records every op and backward node run inside;
``prof.key_averages().table(sort_by="self_cpu_time_total")`` summarises them and
``prof.export_chrome_trace(path)`` writes a trace for chrome://tracing or Perfetto.
"""
from .events import EventList, FunctionEvent, FunctionEventAvg
from .profiler import (ProfilerAction, ProfilerActivity, profile, record_function, schedule,
                       supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction",
           "supported_activities", "tensorboard_trace_handler", "EventList", "FunctionEvent", "FunctionEventAvg"]
