"""The ``.grad`` of input tensors a captured call's backward adds to: a backward inside the function into
an input leaf (``x.requires_grad_(); loss.backward(); x.grad.sign()``: adversarial examples, saliency
maps, gradient penalties).

The parameters' ``.grad`` are replayed so (:func:`~.capture._finish`): one the call made is an extra
output of the graph, set after each replay. An input's is the same, by the input's position, with
eager's AccumulateGrad done by the replay: while the call is recorded each leaf input's ``.grad`` is
held aside (:func:`hide_grads`), so the graph computes what the call adds, whether or not the input
came with one, and a replay sets it where the input has none and adds it in place where it has one
(:func:`set_grads`), as eager's engine does; the recording's own result is added to the held one after
the call (:func:`merge_grads`). A call that reads an input's ``.grad`` gets the held one back at the
read (``x.grad`` then is a placeholder, ``("input_grad", i)``, written in place) and keeps the guard on
which inputs have one (``INPUT_GRADS``); a ``.grad`` the call assigns is set as assigned. A backward
in a call whose input has gradient hooks registered before it breaks the graph (the recording's hook
would be baked in, another call's differ; guarded by ``INPUT_HOOKS``). A non-leaf input has no
``.grad`` (a backward into its history, made before the call, is a graph break of its own:
``aot.retained_history``, ``sources.history_nodes``). A gradient hook the call registers on an input
(``x.register_hook(lambda g: g * 2)``), a parameter or a global tensor is registered again by each
replay (:func:`note_hook`).
"""
import types

from ..autograd.engine import _accumulate
from .layouts import layout_of

__all__ = ["INPUT_GRADS", "INPUT_HOOKS", "input_facts", "hide_grads", "restore_read", "merge_grads",
           "input_grad_sets", "grad_layouts", "set_grads", "note_hook", "input_hooks"]

INPUT_GRADS, INPUT_HOOKS = "which inputs have .grad", "which inputs have gradient hooks"


def _hooked(t):
    node = t._node  # (a leaf's AccumulateGrad: its hooks are the leaf's, guards.hook_ids)
    return node is not None and bool(node._pre_hooks or node._hooks)


def input_facts(inputs):
    """The guards on the inputs' gradients (:func:`.guards.snapshot`; kept by ``sources.relevant``
    where the call reads an input's ``.grad``, or runs a backward): which have a ``.grad``, which hooks."""
    return [(INPUT_GRADS, tuple([t._grad is not None for t in inputs])), (INPUT_HOOKS, tuple(map(_hooked, inputs)))]


def hide_grads(inputs):
    """Takes the ``.grad`` of the leaf ``inputs`` aside for a recording: ``({id(tensor): (tensor, grad)},
    whether any input has gradient hooks)``."""
    held = {}
    for t in inputs:
        if t._grad is not None and t._grad_fn is None and id(t) not in held:
            held[id(t)] = t, t._grad
            t._grad = None
    return held, any(map(_hooked, inputs))


def restore_read(tracer, tensor):
    """Gives ``tensor`` back the ``.grad`` held aside from it (:func:`hide_grads`) as the call reads it,
    what the call added so far added into it (in place, recorded: ``x.grad`` a placeholder written)."""
    _, grad = tracer.stashed.pop(id(tensor))
    added, tensor._grad = tensor._grad, grad
    if added is not None:
        _accumulate(tensor, added, False)


def merge_grads(held):
    """After the recorded call: adds what it set as each held input's ``.grad`` into the held one (in
    place, as eager's engine, unrecorded), which becomes its ``.grad`` again. Returns ``{id(tensor):
    what the call set}`` (None: nothing) for :func:`input_grad_sets`."""
    ends = {}
    for key, (tensor, grad) in held.items():
        ends[key], tensor._grad = tensor._grad, grad
        if ends[key] is not None:
            _accumulate(tensor, ends[key], False)
    return ends


def input_grad_sets(tracer, outputs):
    """``[(input position, output index or None, adds)]``: each leaf input's ``.grad`` (a non-leaf's
    the call assigned: its retained one) after the recorded call where it is not the array it came with (None: set to None), the graph node of a new
    one appended to ``outputs``; ``adds``: a replay accumulates it as eager's engine (only a backward
    made it), else sets it (the call assigned ``.grad``). A ``.grad`` set to a tensor made outside the
    graph is a graph break (in ``tracer.breaks``)."""
    inputs, sets, ends, tracer.grad_layouts = tracer.world.inputs, [], tracer.grad_ends or {}, []
    if tracer.hooked and tracer.ran_backward:  # (the hook's work is in the graph: another call's hooks differ)
        tracer.breaks.append(("a backward into an input with gradient hooks registered before the call",
                              "<end of function>"))
        return []
    for i, t in enumerate(inputs):
        if t._grad_fn is not None and id(t) not in tracer.grad_written or any(u is t for u in inputs[:i]):
            continue  # (a non-leaf's .grad changes where the call assigns it only; a tensor passed twice: its first)
        grad, source, adds = ends.get(id(t), t._grad), ("input_grad", i), id(t) not in tracer.grad_written
        if grad is not None and tracer.known.get(id(grad._data), ((None,),))[0] == source:
            continue  # the array it came with, accumulated into in place if at all
        if grad is None:
            if not adds:
                sets.append((i, None, False))
            continue
        node = tracer.value.get(id(grad._data))
        if node is None or node.op == "placeholder":
            tracer.breaks.append(("an input's .grad was set to a tensor made outside the graph", "<end of function>"))
            return []
        sets.append((i, len(outputs), adds))
        tracer.grad_layouts.append(layout_of(grad._data))
        outputs.append(node)
    return sets


def grad_layouts(cap, tracer):
    """The layouts of the ``.grad`` outputs (the parameters' then the inputs'), as eager left them."""
    return [layout_of(p.grad._data) for p, i in cap.grad_sets if i is not None] + tracer.grad_layouts


def note_hook(tracer, tensor, hook, handle):
    """Notes ``tensor.register_hook(hook)`` (its ``handle``) in the call ``tracer`` records, on an input,
    a parameter or a tensor the function reads from its closure or globals (the same object on each
    call): a function whose value depends on nothing of the call (no closure cells, no defaults: the
    same function object serves each replay) is registered again by each replay (:func:`input_hooks`);
    any other hook there breaks the graph (the recording's would serve the replays). A hook on a
    tensor the call made breaks the graph where a backward meets it (``aot.runs_hooks``)."""
    source = tracer.known.get(id(tensor._data), ((None,),))[0]
    if source[0] == "input" and tracer.world.inputs[source[1]] is tensor:
        target = source[1]
    elif source[0] == "param" and source[1] is tensor \
            or source[0] is None and id(tensor._data) not in tracer.made and not tracer.made_here(tensor):
        target = tensor
    else:
        return
    if type(hook) is types.FunctionType and hook.__closure__ is None and hook.__defaults__ is None \
            and hook.__kwdefaults__ is None:
        tracer.hooks_added += ((target, hook, handle),)
    else:
        tracer.graph_break("Tensor.register_hook with a hook made from the call's values (a closure, a bound "
                           "method): a replay would register the recording's")


def input_hooks(tracer):
    """``[(input position or tensor, hook)]``: the hooks the recorded call registered on its inputs (by
    position), parameters and free tensors and did not remove (:func:`note_hook`), which a replay
    registers again (:func:`set_grads`)."""
    return [(target, hook) for target, hook, handle in tracer.hooks_added if handle.id in handle.table]


def set_grads(cap, inputs, results):
    """Sets the ``.grad`` of the parameters and inputs a replay of ``cap`` updates from its ``results``
    (an input's added into the one it has where the call only ran a backward into it), and registers
    the gradient hooks the call registers on its inputs (:func:`input_hooks`)."""
    for target, hook in cap.input_hooks:
        (inputs[target] if type(target) is int else target).register_hook(hook)
    for p, i in cap.grad_sets:
        p.grad = None if i is None else results[i]
    for k, i, adds in cap.input_grad_sets:
        t = inputs[k]
        if adds and t._grad is not None:
            _accumulate(t, results[i], False)
        else:
            t.grad = None if i is None else results[i]
