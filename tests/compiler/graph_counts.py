"""Graph counts call by call, ember's (``unique_graphs``) against torch 2.13's (a
``CompileCounter`` backend's frames), for functions of ``x = arange(6.0)`` and a few Python
numbers: the int and float symbol tests compare both lists and the results."""
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters


def run(fn, module, args):
    """``fn(module.arange(6.0), *args)`` as a list, or the exception's class and words."""
    try:
        return fn(module.arange(6.0), *args).tolist()
    except Exception as error:
        return type(error).__name__, str(error)


def graph_counts(fn, module, calls):
    """``(counts, results)``: the graph count after each call of ``calls`` (argument tuples) of
    ``fn`` compiled afresh by ``module`` (``torch`` or ``ember``), and each call's :func:`run`."""
    counts, results = [], []
    if module is torch:
        torch._dynamo.reset()
        counter = CompileCounter()
        compiled = torch.compile(fn, backend=counter)
    else:
        ember.compiler.reset()
        compiled = ember.compile(fn)
    for args in calls:
        results.append(run(compiled, module, args))
        counts.append(counter.frame_count if module is torch else counters["stats"]["unique_graphs"])
    return counts, results
