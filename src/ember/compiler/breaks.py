"""Graph breaks: what a captured graph cannot hold.

A value Python needs while the function runs (``.item()``, ``bool(t)`` in control flow,
``.numpy()``, printing): :data:`VALUE_METHODS` names the Tensor methods a recording patches
(:mod:`.tensor_patches`) and why each breaks. A sparse tensor an op reads (:data:`SPARSE`): the graph
holds dense arrays only, and torch's dynamo breaks on one too ("Attempted to wrap sparse
Tensor"), so the statement reading it runs eagerly.
"""
from .._backend.sparse import SparseCOO
from .._tensor import Tensor
from .._tensor_subclass import (CallersReads, OwnReads, converts_results, custom_torch_function, enabled as _overrides_on,
                                is_torch_function_mode_enabled, overloaded_args)

__all__ = ["VALUE_METHODS", "SPARSE", "GRAPH_BREAK", "sparse_argument", "eager_argument", "unobserved", "observed"]

SPARSE = ("Attempted to wrap sparse Tensor: torch.compile does not support sparse Tensors "
          "(ember's graphs hold dense tensors; the code reading it runs eagerly)")

GRAPH_BREAK = "call to ember._dynamo.graph_break()"  # (the reason of torch._dynamo.graph_break())

VALUE_METHODS = {
    "item": ".item() needs the tensor's value in Python",
    "tolist": ".tolist() needs the tensor's values in Python",
    "numpy": ".numpy() hands the array to Python",
    "__array__": "conversion to a NumPy array hands the array to Python",
    "__bool__": "bool(tensor) (data-dependent Python control flow) needs the tensor's value",
    "__int__": "int(tensor) needs the tensor's value in Python",
    "__float__": "float(tensor) needs the tensor's value in Python",
    "__index__": "using a tensor as an index needs its value in Python",
    "__repr__": "printing a tensor needs its values",
    "__str__": "printing a tensor needs its values",
    "__format__": "formatting a tensor needs its values",
}


def sparse_argument(args, kwargs):
    """Whether a tensor argument, or one in a tuple or list argument (gcn's ``train_iter(model,
    ..., (features, adj))``), is sparse: the compiler captures dense tensors only, so such a
    call runs eagerly (torch's graph breaks on sparse tensors too; ``fullgraph=True`` raises
    Unsupported, as torch's)."""
    for a in (*args, *kwargs.values()):
        for t in a if type(a) in (tuple, list) else (a,):  # (one level: a list may hold itself)
            if type(t) is Tensor and type(t._data) is SparseCOO:
                return True
    return False


def eager_argument(args, kwargs, fullgraph=False):
    """Whether the call runs eagerly: a sparse tensor argument (:func:`sparse_argument`) or a
    tensor-like argument that is no Tensor (its ``__torch_function__`` may return anything). A
    Tensor subclass, with the default ``__torch_function__`` or its own, and a call under a
    ``TorchFunctionMode`` are captured as torch's dynamo traces them: the recording runs their
    ``__torch_function__``, the inputs' classes and the mode stack's types are guarded
    (:func:`~.guards.snapshot`), results are made the recorded classes again (:mod:`.structure`),
    and what the override changes in Python is a side effect (:mod:`.side_effects`). Under
    ``fullgraph=True`` those run eagerly as before, since such a side effect (a logging mode's
    append, which torch's dynamo replays after its graph) would raise."""
    if not _overrides_on():
        return sparse_argument(args, kwargs)
    values = (*args, *kwargs.values())
    return sparse_argument(args, kwargs) or custom_torch_function(values) or fullgraph and (
        is_torch_function_mode_enabled() or not all(map(converts_results, map(type, overloaded_args(values)))))


def unobserved(fn, *args):
    """``fn(*args)`` with ``__torch_function__`` overrides and modes off while they are on: the
    compiler's own reads of the tensors (``t.requires_grad`` in the guards, ``t.grad_fn``) are no
    calls a logging mode or subclass should see (torch's dynamo reads them in C)."""
    if not _overrides_on():
        return fn(*args)
    with OwnReads():  # (the guards' torch_function_state still reads the caller's)
        return fn(*args)


def observed(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` (the user's function a recording runs) with the caller's overrides
    and modes on again inside :func:`unobserved` (the compiler's work around the recording)."""
    with CallersReads():
        return fn(*args, **kwargs)
