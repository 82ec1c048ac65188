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


def compiled_afresh(fn, module):
    """``(compiled, count)``: ``fn`` compiled by ``module`` (``torch`` or ``ember``) after a reset,
    and a function giving its graph count so far."""
    if module is torch:
        torch._dynamo.reset()
        counter = CompileCounter()
        return torch.compile(fn, backend=counter), lambda: counter.frame_count
    ember.compiler.reset()
    return ember.compile(fn), lambda: counters["stats"]["unique_graphs"]


def graph_counts(fn, module, calls):
    """``(counts, results)``: the graph count after each call of ``calls`` (argument tuples) of
    ``fn`` compiled afresh by ``module`` (``torch`` or ``ember``), and each call's :func:`run`."""
    counts, results = [], []
    compiled, count = compiled_afresh(fn, module)
    for args in calls:
        results.append(run(compiled, module, args))
        counts.append(count())
    return counts, results


def counting_backend(counts):
    """A callable backend counting its calls in ``counts[0]`` and its callables' in ``counts[1]``."""
    def backend(gm, example_inputs):
        counts[0] += 1

        def run(*args):
            counts[1] += 1
            return gm(*args)
        return run
    return backend
