"""Callable backends (torch's custom backend API): ``ember.compile(fn, backend=my_backend)``.

``my_backend(gm, example_inputs)`` is called once per captured graph, when it is compiled (at
the call that captured it), with the graph as torch's dynamo hands it: an
:class:`~ember.fx.GraphModule` of ``call_function`` nodes (:mod:`~ember.fx.backend_graph`; its
inputs: the graph's placeholders in order, the tensors read from parameters and globals
included) and, as torch's, the tensors that call fed them (the call's own argument tensors,
the same objects); what it returns is called, from that capturing call on (:func:`first_run`),
with the placeholders' tensors and returns the graph's outputs (a tuple or list), autograd
running through it as in the ``"eager"`` backend. A graph with size symbols (dynamic shapes) takes, as torch's does, the
symbols' ints first (``graph.symbols`` in order; its example inputs: their values at the
capturing call), then the tensors, its sizes computed by ``call_function`` nodes over those
ints; one with control flow is handed as the captured graph (a
:class:`~ember.fx.graph_module.SizedGraphModule` of ``call_op`` nodes).
"""
from .._creation import zeros
from ..fx import backend_graph as _backend_graph, graph_module as _graph_module  # (the modules: fx imports
# the compiler)
from .breaks import GRAPH_BREAK, VALUE_METHODS, unobserved
from .probe_state import State
from .patches import LOG, PRINT, WARN, WRITE, quiet_output
from .structure import _SLOT
from .torch_names import placeholder_names

__all__ = ["custom_runner", "is_custom", "state_before", "first_run", "first_split_run"]

# the graph breaks whose statements, run again, repeat nothing a user sees but their output, warnings
# and log records (dropped)
_RERUNNABLE = (*VALUE_METHODS.values(), PRINT, WRITE, *WARN, LOG)


def is_custom(backend):
    """Whether ``backend`` is a callable backend (not a name)."""
    return callable(backend) and not isinstance(backend, str)


def _example(fetch, inputs, sizes):
    """A placeholder's tensor at the capturing call, or None where it has none (a ``.grad`` or
    an optimizer's state not made yet)."""
    try:
        return fetch(inputs, sizes)
    except (KeyError, AttributeError):
        return None


def custom_runner(backend, graph, fetch=(), call=None, sources=None, n_outputs=None):
    """``run(tensors[, sizes]) -> outputs``: ``backend`` (a callable backend) applied to ``graph``
    now. Its example inputs: the placeholders' tensors at the capturing call ``call``, its
    ``(world, sizes)`` (:class:`~.guards.World`), read by ``fetch`` (each placeholder's
    ``fetch(inputs, sizes)``, as the entry reads them); where there is none, zeros of the
    placeholders' shapes. The placeholders are named as torch's in that call's world
    (:func:`~.torch_names.placeholder_names` of ``sources``, one per placeholder). ``n_outputs``:
    the user's outputs, first (a joint graph's forward: its values saved for a backward after
    them, which the backend's graph leaves out, as torch's; placeholders only they read too)."""
    names, kept = graph.symbols, None
    if names and (call is None or call[1] is None or not _backend_graph.handed_as_fx(graph)):
        gm = _graph_module.SizedGraphModule({}, graph, range(len(graph.placeholders)), (_SLOT,) * len(graph.outputs))
        if call is None or call[1] is None:  # (no sizes to show it: replayed without it)
            return lambda tensors, sizes: gm.run_at(tensors, sizes)
    else:
        targets = None if call is None or sources is None else placeholder_names(graph, sources, call[0])
        gm = unobserved(_backend_graph.backend_graph_module, graph, targets, call and call[1], n_outputs)  # (its examples)
        kept = _backend_graph.without_unused(gm, len(names))
    examples = [] if call is None else [_example(f, call[0].inputs, call[1]) for f in fetch]
    if call is None or any(e is None for e in examples):
        examples = [zeros(p.meta["shape"], dtype=p.meta["dtype"], requires_grad=p.meta["requires_grad"])
                    for p in graph.placeholders]
    if kept is not None and len(kept) < len(graph.placeholders):  # (the fast path: all kept)
        examples = [examples[i] for i in kept]
        run = custom_runner_of(backend, gm, names, examples, call)
        return (lambda tensors, sizes: run([tensors[i] for i in kept], sizes)) if names else \
            (lambda tensors: run([tensors[i] for i in kept]))
    return custom_runner_of(backend, gm, names, examples, call)


def custom_runner_of(backend, gm, names, examples, call):
    """``run(tensors[, sizes])``: the callable ``backend`` returns for ``gm`` and ``examples``
    (after the size symbols' values at ``call``, its ``(world, sizes)``)."""
    compiled = backend(gm, [call[1][n] for n in names] + examples if names else examples)
    if not callable(compiled):
        raise TypeError(f"a compiler backend returns a callable; {backend!r} returned {compiled!r}")
    if names:
        return lambda tensors, sizes: list(compiled(*[sizes[n] for n in names], *tensors))
    return lambda tensors: list(compiled(*tensors))


def state_before(backend, world):
    """What :func:`first_run` sets back before the callable runs (a :class:`~.probe_state.State`
    of ``world``: the tensors the call may write, the random stream); None where ``backend`` is
    a name (the first call keeps the recording's results)."""
    return unobserved(State, world) if is_custom(backend) else None


def _grads_kept(before, cap):
    """Whether each ``.grad`` the recording ``cap`` set is a parameter's, which ``before`` puts back."""
    kept = {id(p) for p, *_ in before.params}
    return all(id(p) in kept for p, _ in cap.grad_sets)


def first_run(entry, cap, result, before, call):
    """The results of the call that recorded ``cap`` (eager's, ``result``): as torch's, the
    callable ``entry``'s backend returned runs from this first call. The recording already ran
    the function on the real inputs, so the callable runs on them again after what the call
    read is set back to ``before`` (:func:`state_before`): the tensors it wrote into (inputs,
    buffers, parameters, optimizer state) and the random stream (its ops draw what the
    recording drew), so that each write is made once, by the callable; the ``.grad`` of the
    parameters and inputs it sets (``p.grad = g``), the state puts back too. Where that is not sound
    the recording's results stand and the callable runs from the next call: a graph that runs
    a backward (the recording's may have freed a graph made before the call) or sets the
    ``.grad`` of another tensor, or writes into a tensor with history (its ``grad_fn`` moved by
    the recording's write), or writes a float it read (``cfg["lr"] = cfg["lr"] * 0.5``: :mod:`.path_writes`).
    ``call``: ``(inputs, fn, args, kwargs, sizes)``, the entry's arguments."""
    if before is None or entry.uncut or cap.ran_backward or cap.path_writes or not _grads_kept(before, cap):
        return result
    written = [entry.fetch[i](call[0], call[4]) for i in entry.mutated]
    if any(t.grad_fn is not None for t in written):
        return result
    before.restore()  # (the versions of the tensors written count the recording's writes too)
    return entry(*call)


def first_split_run(split_fn, cap, result, before, args, kwargs):
    """The results of the call whose recording ``cap`` met graph breaks (eager's, ``result``),
    the function now split at them (``split_fn``): as torch's, the callable backend's callables
    run for the pieces from this first call (each piece's own :func:`first_run`). The recording
    ran the whole function, so the split one runs on ``args`` and ``kwargs`` again, after what
    the call wrote is set back to ``before`` (:func:`state_before`), its prints, writes to
    ``sys.stdout``/``sys.stderr``, warnings and log records dropped (the recording showed them:
    :func:`~.patches.quiet_output`). Only where that run repeats nothing else: each break a value
    read into Python (``.item()``, ``.tolist()``, ``bool(t)`` ...), ``graph_break()``, output, a
    warning or a logger's call; no change a recording sees as a Python side effect (that is a
    break of its own: a file written, a ``disable``d function called), no backward, no write into
    a tensor with history, no float written where it was read (:mod:`.path_writes`). Elsewhere the
    recording's results stand and the pieces run the callables from the next call."""
    if before is None or cap.ran_backward or cap.path_writes or not _grads_kept(before, cap) or any(
            reason not in _RERUNNABLE and not reason.startswith(GRAPH_BREAK) for reason, _ in cap.breaks):
        return result
    if any(t._versions[0] != v and t.grad_fn is not None for (t, _), v in zip(before.tensors, before.versions)):
        return result
    before.restore()
    with quiet_output():
        return split_fn(*args, **kwargs)
