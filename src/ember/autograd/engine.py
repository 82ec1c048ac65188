"""The backward engine: one topological walk over the tape.

Dependencies are counted first (how many edges reach each node), then nodes run when all
their gradient contributions have arrived; a node's gradient is the sum of what reached it.
"""
import threading
from sys import getrefcount

from .._backend import dense, ndarray
from .._dispatch_state import AUTOCAST, OBSERVERS
from .grad_mode import STATE
from .graph import AccumulateGrad, gradient_edge

__all__ = ["backward", "grad"]

_TASK = threading.local()  # ``selective``: the running backward wants some gradients only


def _is_checkpoint_valid():
    """False while the running backward was asked for some gradients only (``autograd.grad``,
    ``backward(inputs=...)``), where a reentrant checkpoint cannot recompute; True otherwise
    (torch.autograd._is_checkpoint_valid)."""
    return not getattr(_TASK, "selective", False)


def _make_grads(outputs, grad_outputs):
    grads = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            g = out.new_ones(out.shape)
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and "
                               f"output[0] has a shape of {out.shape}.")
        grads.append(g)
    return grads


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _root_edge(t, i=0):
    if not t.requires_grad:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    return gradient_edge(t)


def _execute(roots, root_grads, retain_graph, create_graph, capture=None, accumulate=True, cut=False, inner=False):
    """Runs the graph from ``roots``. ``capture`` maps nodes whose incoming gradient is wanted
    (for ``autograd.grad`` and ``backward(inputs=...)``) to a slot index; only the nodes that
    lead to a captured one run then. With ``cut`` (:func:`grad_within`) a captured node is not
    run (no gradient flows past it) and no retained ``.grad`` is written. ``inner``: the walk
    of a reentrant checkpoint's recomputation, which leaves checkpoints valid."""
    # course:begin 03/count-dependencies
    # hint: walk the graph from the roots' nodes (node.next_functions: (node, index) pairs, node None for
    # hint: inputs that need no gradient) and count in deps[node] how many edges reach each node
    deps = {}
    stack = list(dict.fromkeys(node for node, _ in roots))
    seen = set(stack)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    # course:end 03/count-dependencies
    useful = None if capture is None else _leading_to([n for n, _ in roots], capture)

    buffers = {}
    for t_edge, g in zip(roots, root_grads):
        _add(buffers, t_edge, g)
    roots = [node for node, _ in roots]
    ready = [n for n in dict.fromkeys(roots) if deps.get(n, 0) == 0]
    captured = {}
    _ALONE[0] = _probe() if _STEAL else None  # (the interpreter's frame evaluator may have changed)
    prev, casts, selective = STATE.enabled, AUTOCAST.dtype, getattr(_TASK, "selective", False)
    STATE.enabled = create_graph
    # (grad_within records a compiled backward whole; a checkpoint's inner walk is the outer one's part)
    _TASK.selective = capture is not None and not cut and not inner
    AUTOCAST.dtype = None  # gradients run in the dtypes the forward recorded, never autocast
    try:
        while ready:
            node = ready.pop()
            slots = buffers.pop(node)
            grad = slots[0]
            if node._pre_hooks and grad is not None:
                for hook in tuple(node._pre_hooks.values()):
                    new = hook(grad)
                    if new is not None:
                        grad = new
            if node._metadata and not cut and node._metadata.get("retain"):
                slots[0] = grad  # (each retained output reads its own slot: unbind's views share a node)
                for keep in node._metadata["retain"]:
                    keep(slots)
            if capture is not None and node in capture:  # (each output's gradient: unbind's views are one node's)
                captured[node] = [grad, *slots[1:]]
                if cut:  # what lies past an input passes on nothing
                    _skip(node, deps, buffers, ready, True)
                    continue
            if isinstance(node, AccumulateGrad):
                variable = node.variable
                if grad is not None and accumulate and variable is not None and (
                        capture is None or node in capture):
                    slots[0] = None  # the engine's one reference is ``grad``: _accumulate may keep it
                    if OBSERVERS:
                        _observed(OBSERVERS, node, _accumulate, variable, grad, create_graph)
                    else:
                        _accumulate(variable, grad, create_graph)
                    if node._metadata and "post_accumulate_grad" in node._metadata:
                        for hook in tuple(node._metadata["post_accumulate_grad"].values()):
                            returned = hook(variable)
                            if returned is not None:  # (torch's class and words, by what came back)
                                raise RuntimeError("Tensor post accumulate grad hooks should return None.") \
                                    if hasattr(returned, "_data") else \
                                    TypeError(f"expected Variable, but hook returned '{type(returned).__name__}'")
                continue
            if useful is not None and node not in useful:
                continue
            slots[0] = grad
            grads = _observed(OBSERVERS, node, node.apply, slots) if OBSERVERS else node.apply(slots)
            if STATE.anomaly:
                _check_nan(node, grads)
            if node._hooks:
                for hook in tuple(node._hooks.values()):
                    new = hook(grads, (grad,))
                    if new is not None:
                        grads = new
            if not retain_graph:
                node.release()
            leaves = []  # made ready here; run before the rest, as torch's engine runs AccumulateGrad first
            for edge, g, shape, dtype in zip(node.next_functions, grads, node.shapes, node.dtypes):
                nxt = edge[0]
                if nxt is None:
                    continue
                if g is not None:
                    if g._data.shape != shape:
                        g = _fit_shape(node, g, shape)
                    if g.dtype is not dtype:
                        # A real input used in a complex computation gets the real part.
                        g = (g.real if g.dtype.is_complex and not dtype.is_complex else g).to(dtype)
                    if STATE.enabled is False and g.requires_grad:
                        g = g.detach()
                    _add(buffers, edge, g)
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    if nxt not in buffers:
                        _skip(nxt, deps, buffers, ready, retain_graph)
                    elif isinstance(nxt, AccumulateGrad):
                        leaves.append(nxt)
                    else:
                        ready.append(nxt)
            # (a gradient hook on a parameter, DDP's, then fires as soon as the gradient exists)
            ready += leaves[::-1]
            grads = g = None  # the buffers hold the gradients now (a leaf's may become its .grad: _accumulate)
    finally:
        STATE.enabled, _TASK.selective = prev, selective
        AUTOCAST.dtype = casts
    return captured


def _observed(observers, node, fn, *args):
    """``fn(*args)`` as the work of ``node``, between the observers' node_enter and node_exit."""
    observers = tuple(observers)
    for o in observers:
        o.node_enter(node)
    try:
        return fn(*args)
    finally:
        for o in reversed(observers):
            o.node_exit(node)


def _add(buffers, edge, g):
    # course:begin 03/add-gradient
    # hint: buffers[node] holds one slot per output of node (node.num_outputs); a gradient arriving at
    # hint: (node, nr) is stored in slot nr, or added to what is there (a value used twice gets both)
    node, nr = edge
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * node.num_outputs
    slots[nr] = g if slots[nr] is None else slots[nr] + g
    # course:end 03/add-gradient


def _fit_shape(node, g, shape):
    try:
        return g.sum_to_size(shape)
    except (RuntimeError, ValueError, IndexError):
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient - got "
                           f"{list(g.shape)} but expected shape compatible with {list(shape)}") from None


def _check_nan(node, grads):
    for i, g in enumerate(grads):
        if g is not None and g.dtype.is_inexact and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _skip(node, deps, buffers, ready, retain_graph):
    """A node that received no gradient at all: release it and let its inputs proceed."""
    stack = [node]
    while stack:
        n = stack.pop()
        if not retain_graph:
            n.release()
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                if nxt in buffers:
                    ready.append(nxt)
                else:
                    stack.append(nxt)


def _leading_to(roots, targets):
    """The nodes from which some node in ``targets`` can be reached (iterative post-order)."""
    useful, visited = set(), set()
    stack = [(r, False) for r in roots]
    while stack:
        node, finished = stack.pop()
        if finished:
            if node in targets or any(n in useful for n, _ in node.next_functions if n is not None):
                useful.add(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        stack.extend((n, False) for n, _ in node.next_functions if n is not None and n not in visited)
    return useful


def _accumulate(variable, grad, create_graph):
    if variable._grad is None:
        if not create_graph and getrefcount(grad) == _ALONE[0] and _unshared(grad, variable):
            variable._grad = grad  # no one else can see it: kept, not copied (torch's AccumulateGrad steals it too)
            return
        variable._grad = _first_grad(variable, grad if create_graph else grad.detach(), create_graph)
    elif create_graph:
        variable._grad = variable._grad + grad
    else:  # in place: .grad keeps its identity across steps, as torch's (g = p.grad; step(); g is p.grad)
        if variable._grad.requires_grad:  # made by create_graph=True: this sum is not part of that graph
            variable._grad = variable._grad.detach()
        variable._grad += grad.detach()


# The counts above and in _unshared are of references only the engine holds: for a gradient,
# _execute's local, _accumulate's argument and getrefcount's own (and, while a frame evaluator
# is installed, PEP 523's, the caller's copy of the argument: torch's dynamo leaves its own
# installed once a compile raised, as ``fullgraph=True`` does at a graph break); for an array,
# its tensor's slot, _unshared's local and getrefcount's own. More means a hook, a retain_grad,
# a capture or a user's tensor holds it, and ``.grad`` gets a copy. What getrefcount counts
# differs between Python versions (3.14 borrows some references) and with the interpreter's
# frame evaluator, so each walk probes the same shapes of code first (_ALONE) and keeps the
# gradient without a copy only where they give these counts; elsewhere it is always copied.


def _count_argument(x):
    return getrefcount(x)


def _probe():
    """What getrefcount counts now for a local passed to a function, as _execute passes a
    gradient to _accumulate: 3, or 4 under a frame evaluator; None (never kept) where that is
    neither or where an attribute read into a local, as _unshared reads arrays, is not 3."""
    held, box = object(), _Slot()
    box.slot = object()
    read = box.slot
    count = _count_argument(held)
    return count if count in (3, 4) and getrefcount(read) == 3 else None


class _Slot:
    __slots__ = ("slot",)  # as a tensor holds its array


_STEAL = _probe() is not None  # (False: every first gradient is copied)
_ALONE = [_probe() if _STEAL else None]  # the count of a gradient only the engine holds, probed per walk


def _unshared(grad, variable):
    """Whether ``grad``, a gradient no other tensor refers to, owns its memory alone, laid out as
    ``variable.grad`` must be (row-major: :func:`_first_grad`), so it can become ``.grad`` as it
    is: a plain tensor (no history, not a view of a tensor) over a C-contiguous array that is
    its storage's only view (or the storage itself)."""
    if grad._base is not None or grad._grad_fn is not None or grad._requires_grad:
        return False
    array = grad._data
    if type(array) is not ndarray or not array.flags.c_contiguous or getrefcount(array) != 3:
        return False  # refs: grad's slot, this local and the argument
    owner = array.base
    if owner is not None and (type(owner) is not ndarray or owner.base is not None
                              or owner.nbytes != array.nbytes or getrefcount(owner) != 3):
        return False  # refs: array.base, this local and the argument
    data = variable._data
    return type(data) is ndarray and (data.flags.c_contiguous or not dense(data)) and grad.dtype is variable.dtype


def _first_grad(variable, grad, create_graph):
    """A leaf's first ``.grad`` laid out as torch's AccumulateGrad stores it: with the leaf's
    strides when the leaf is dense (a transposed leaf gets a transposed gradient), else
    row-major (an expanded or stepped leaf; a reduction's expanded gradient); never an alias
    of the gradient's memory unless ``create_graph`` keeps it in the graph."""
    if not variable._data.flags.c_contiguous and dense(variable._data):
        return variable.detach().clone().copy_(grad)
    g = grad.contiguous()
    return g if create_graph or g is not grad else g.clone()


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of ``tensors`` w.r.t. graph leaves and adds it into their ``.grad``
    (``torch.autograd.backward``). ``grad_tensors`` is required for non-scalar outputs;
    ``inputs`` limits accumulation to the given tensors.

    Raises RuntimeError for an output that does not require grad, a non-scalar output without
    a gradient, or a second backward through a freed graph.
    """
    tensors = _as_tuple(tensors)
    grads = _make_grads(tensors, _as_tuple(grad_tensors) or (None,) * len(tensors))
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(tensors)]
    capture = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        capture = {}
        for t in inputs:
            capture.setdefault(_root_edge(t)[0], []).append(t)
    captured = _execute(roots, grads, retain_graph, create_graph, capture)
    if capture is not None:
        for node, ts in capture.items():
            if not isinstance(node, AccumulateGrad) and node in captured:
                for t in ts:  # (one retaining its grad got it from its hook)
                    if captured[node][t._output_nr] is not None and not t._retains_grad:
                        _accumulate(t, captured[node][t._output_nr], create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """Returns d(outputs)/d(inputs) as a tuple, without touching ``.grad``
    (``torch.autograd.grad``). RuntimeError if an input is unreachable and ``allow_unused``
    is not set."""
    return _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads)


def grad_within(outputs, inputs, grad_outputs):
    """The partial derivatives of ``outputs`` w.r.t. ``inputs``, each input taken as an
    independent variable: the graph is cut at the inputs, so a parameter's gradient leaves out
    the paths through an input made from it earlier (``h1 = cell(x, h0); h2 = cell(x, h1)``:
    the second call's own gradient for the weight, not the total). None for an unused input;
    the graph is kept; no ``.grad`` (retained or a leaf's) is written. The compiler records a
    compiled function's backward with it (``compiler/aot.py``): autograd chains the replayed
    calls' gradients itself."""
    return _grad(outputs, inputs, grad_outputs, True, False, True, False, cut=True)


def recompute_grad(outputs, inputs, grad_outputs):
    """``grad(outputs, inputs, grad_outputs, allow_unused=True)`` for a checkpoint's backward: the
    walk through the recomputed segment, inside which nested reentrant checkpoints stay valid
    (torch runs that walk as a plain backward)."""
    return _grad(outputs, inputs, grad_outputs, None, False, True, False, inner=True)


def _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads, cut=False,
          inner=False):
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    grads = _make_grads(outputs, _as_tuple(grad_outputs) or (None,) * len(outputs))
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    edges = [_root_edge(t) for t in inputs_t]
    capture = {n: i for i, (n, _) in enumerate(edges)}
    captured = _execute(roots, grads, retain_graph, create_graph, capture, accumulate=False, cut=cut, inner=inner)
    result = []
    for i, ((node, nr), t) in enumerate(zip(edges, inputs_t)):
        g = captured[node][nr] if node in captured else None
        if g is None:
            if materialize_grads:
                g = t.new_zeros(t.shape)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used "
                                   "in the graph. Set allow_unused=True if this is the desired behavior.")
        result.append(g)
    return tuple(result)
