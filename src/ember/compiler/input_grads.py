"""The ``.grad`` of input tensors a captured call sets: a backward inside the function into an input
leaf (``x.requires_grad_(); loss.backward(); x.grad.sign()``: adversarial examples, saliency maps,
gradient penalties).

The parameters' ``.grad`` are replayed so (:func:`~.capture._finish`): a ``.grad`` the call found is a
placeholder (``("grad", p)``), accumulated into in place as eager's AccumulateGrad adds into it; one the
call made is an extra output of the graph, set after each replay. An input's ``.grad`` is the same with
the input's position instead of the parameter (``("input_grad", i)``, :func:`.sources.known_arrays`),
and which inputs come with a ``.grad`` is a guard (``sources.INPUT_GRADS``) where the call reads or sets
one. A non-leaf input has no ``.grad`` to set (a backward into its history, made before the call, is a
graph break of its own: ``aot.retained_history``, ``sources.history_nodes``).
"""
from .layouts import layout_of

__all__ = ["input_grad_sets", "grad_layouts", "set_grads"]


def input_grad_sets(tracer, outputs):
    """``[(input position, output index or None)]``: each leaf input's ``.grad`` after the recorded call
    where it is not the array it came with (None: set to None), the graph node of a new one appended to
    ``outputs``; a ``.grad`` set to a tensor made outside the graph is a graph break (in ``tracer.breaks``)."""
    inputs, sets = tracer.world.inputs, []
    for i, t in enumerate(inputs):
        if t._grad_fn is not None or any(u is t for u in inputs[:i]):  # (a tensor passed twice: its first)
            continue
        grad, source = t._grad, ("input_grad", i)
        if grad is not None and tracer.known.get(id(grad._data), ((None,),))[0] == source:
            continue  # the array it came with, accumulated into in place if at all
        if grad is None:
            if any(s == source for s, _ in tracer.known.values()):
                sets.append((i, None))
            continue
        node = tracer.value.get(id(grad._data))
        if node is None or node.op == "placeholder":
            tracer.breaks.append(("an input's .grad was set to a tensor made outside the graph", "<end of function>"))
            return []
        sets.append((i, len(outputs)))
        outputs.append(node)
    return sets


def grad_layouts(cap, inputs):
    """The layouts of the ``.grad`` outputs (the parameters' then the inputs'), as eager left them."""
    return [layout_of(p.grad._data) for p, i in cap.grad_sets if i is not None] \
        + [layout_of(inputs[k]._grad._data) for k, i in cap.input_grad_sets if i is not None]


def set_grads(cap, inputs, results):
    """Sets the ``.grad`` of the parameters and inputs a replay of ``cap`` updates from its ``results``."""
    for p, i in cap.grad_sets:
        p.grad = None if i is None else results[i]
    for k, i in cap.input_grad_sets:
        inputs[k].grad = None if i is None else results[i]
