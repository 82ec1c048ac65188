"""A compiled forward whose outputs need gradients: forward and backward captured together.

When the captured function returns tensors that require grad without running backward itself
(``model = ember.compile(model)`` in a training loop), the capture also records the backward:
the gradients of those outputs, with grad_output placeholders, w.r.t. the placeholders that
require grad, each taken as an independent variable (``autograd.engine.grad_within``: an input
made earlier from a parameter passes no gradient on to it; autograd chains the calls). The op
entries' derivatives run through the same dispatcher. :func:`split` cuts that joint graph in
two: the forward graph returns the outputs and the values the backward reads (saved
activations); the backward graph takes those and the output gradients. On replay one
autograd node (a custom Function) runs the forward graph and, when the engine reaches it, the
backward graph: ``loss.backward()`` after a compiled forward runs compiled code both ways.
A call made under ``no_grad`` whose function computes under ``enable_grad`` records its
backward too, and its replays attach that node under ``enable_grad`` (:func:`apply_compiled`).
A call that runs a backward itself records one for the results whose history it retained (a
GAN's ``fake`` after the discriminator's ``backward()``: :func:`record_joint`); its own backward
is then part of the forward graph. A later piece of a split function whose ``backward()``
reaches an earlier piece's history runs that statement eagerly (:func:`into_earlier`), through
the pieces' nodes.
"""
import weakref

import numpy as np

from .. import _random
from .._ops.unimplemented import NotImplementedLink
from .._tensor import Tensor
from ..autograd.engine import grad_within
from ..autograd.function import Function
from ..autograd.grad_mode import STATE, enable_grad
from ..autograd.graph import modified_error
from . import replay
from .aliases import hidden_bases, returned_views
from .graph import Graph, Node, nodes_in
from .sources import placeholder_tensors
from .structure import flatten, user_frame
from .layouts import laid_out, layout_of

__all__ = ["record_backward", "runs_hooks", "split", "forward_graph", "without_gradients", "Joint", "CompiledFunction",
           "enables_grad", "apply_compiled", "backward_starts", "retained_history", "made_after", "node_positions", "history_of",
           "record_joint", "released", "RETAINED", "EARLIER", "into_earlier"]


EARLIER = "backward() or autograd.grad into the autograd history of an earlier piece (made before a graph break)"


def into_earlier(tracer, node):
    """Whether a backward the recording ``tracer`` runs reaches the autograd ``node`` an op of
    an earlier piece made (before a graph break), the first time at its statement: a later
    piece's ``errG.backward()`` into DCGAN's ``fake`` (read by ``netD(fake)``), made before
    ``D_G_z1 = output.mean().item()``. That piece would hold ``fake`` as an input, a backward
    into whose history breaks its own recording (``Tracer.history``), so the split runs such a
    backward as an eager statement (torch's dynamo breaks at every ``backward()``): through the
    earlier piece's compiled backward (its outputs' node, :class:`CompiledFunction`)."""
    made = tracer.grad_fns.get(id(node))
    return made is not None and made[0] < len(tracer.pieces) and made[1]() is node and not (
        tracer.breaks and tracer.breaks[-1][0] == EARLIER and tracer.breaks[-1][1] == user_frame())


def released(tracer, t, forward):
    """The output node of a returned tensor ``t`` in a joint graph (``forward``: the ids of its
    forward's nodes): its value's, or, where the call ran a backward that released ``t``'s history
    (not among ``tracer.retained``), a Detach of it, made a forward node (returned detached)."""
    if not tracer.ran_backward or any(t is r for r in tracer.retained):
        return tracer.node(t)
    node = tracer.arg(t.detach(), None)
    forward.add(id(node))
    return node


def record_backward(tracer, outputs, placeholder_tensors):
    """Runs ``grad_within`` of ``outputs`` under ``tracer``; returns ``(forward node ids,
    [(placeholder index, grad Node)], [the layout eager gave each gradient])`` or None when
    nothing is differentiable, or when the outputs' history reaches a node a backward already
    freed (a piece of a split function after ``loss.backward()``) or one whose backward refuses
    (torch's NotImplemented node, ``scatter(reduce=)``): its graph then replays through the
    dispatcher, as autograd sees, and a backward raises as eager's."""
    diff = [(k, t) for k, t in placeholder_tensors if t.requires_grad]
    # (the history before the inputs is autograd's: a loss a backward freed, read by the call, raises there as eagerly)
    inputs = {id(t.grad_fn) for _, t in diff if t.grad_fn is not None}
    if not diff or _in_history(outputs, lambda node: getattr(node, "_freed", False)
                               or getattr(node, "op", None) is NotImplementedLink, inputs):
        return None
    leaves = {id(t._node) for _, t in diff if t.grad_fn is None}
    if _in_history(outputs, lambda node: id(node) not in leaves and runs_hooks(node)):
        tracer.hooked_backward()  # before the hooks run: the forward call runs none
        return None
    forward, ran = {id(n) for n in tracer.graph.nodes}, tracer.ran_backward
    grad_outputs = []
    for i, out in enumerate(outputs):
        g = Tensor._make(np.ones_like(out._data))
        tracer.known[id(g._data)] = (("grad_output", i), f"grad_output_{i}")
        tracer.keep.append(g._data)
        grad_outputs.append(g)
        # placeholders in output order, used or not: the backward graph takes them so, and a
        # backward may read a later output's gradient first (scan's moves its ys' gradient first)
        tracer.node(g)
    # A leaf's gradient hooks (DDP's averaging) stay out of the graph: the replayed backward
    # flows into the leaves' AccumulateGrad nodes, where the engine runs them on every call.
    hooked = [t._node for _, t in diff if t.grad_fn is None and t._node is not None and t._node._pre_hooks]
    suspended = [(node, node._pre_hooks) for node in hooked]
    for node in hooked:
        node._pre_hooks = type(node._pre_hooks)()
    try:
        # each call's own derivatives: autograd chains a call fed another's output through its node
        grads = grad_within(outputs, [t for _, t in diff], grad_outputs)
    finally:
        for node, hooks in suspended:
            node._pre_hooks = hooks
    tracer.ran_backward = ran  # (grad_within's nodes are no backward of the call's)
    return (forward, [(k, tracer.node(g)) for (k, _), g in zip(diff, grads) if g is not None],
            [layout_of(g._data) for g in grads if g is not None])


def runs_hooks(node):
    """Whether the autograd ``node`` runs the user's Python in a backward: a tensor's gradient
    hooks, a leaf's post-accumulate hooks, ``retain_grad`` (it sets ``.grad`` of a result), or a
    module's full backward hooks (a Function marked ``runs_hooks``): a graph cannot replay them."""
    meta = getattr(node, "_metadata", None)
    return bool(getattr(node, "_pre_hooks", None) or getattr(node, "_hooks", None)
                or meta and (meta.get("post_accumulate_grad") or meta.get("retain"))
                or getattr(getattr(node, "fn", None), "runs_hooks", False))


def _in_history(tensors, found, stop=()):
    """Whether the autograd history of ``tensors`` reaches a node for which ``found`` is true
    (not walking into the nodes whose ids are in ``stop``)."""
    todo, seen = [t.grad_fn for t in tensors], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen or id(node) in stop:
            continue
        if found(node):
            return True
        seen.add(id(node))
        todo += [n for n, _ in node.next_functions]
    return False


class Joint:
    """The two halves of a joint graph and how their inputs and outputs line up."""

    def __init__(self, forward, backward, forward_sources, n_outputs, grad_slots):
        self.forward, self.backward, self.forward_sources = forward, backward, forward_sources
        self.n_outputs = n_outputs          # the forward's first outputs are the user's
        self.grad_slots = grad_slots        # (placeholder index, backward output index)
        self.saved_inputs = []              # the forward's placeholders the backward reads
        self.draws = any(getattr(n.target, "draws", False) for n in forward.nodes)
        self.reads_mutated = _reads_mutated(forward)
        self.recorded = None                # (forward, backward) through the dispatcher, when asked
        self.enables_grad = enables_grad(forward)
        saved = set(map(id, forward.outputs[n_outputs:]))  # results the backward reads: a write into one is checked
        self.saved_results = [i for i, v in enumerate(forward.outputs[:n_outputs]) if id(v) in saved]


def backward_starts(tracer):
    """Notes, at the first backward a recorded call runs, the graph nodes of the values so far
    (``tracer.made_before``): torch's dynamo breaks there, so a result among them is an output of
    its forward graph (:func:`node_positions`), one computed after of the next. Returns True
    (``tracer.ran_backward``)."""
    tracer.made_before = frozenset(tracer.value.values())
    return True


RETAINED = ("the function runs backward or autograd.grad and returns a tensor requiring grad whose graph it "
            "retained, whose backward could not be recorded: a replay's would require no grad")


def retained_history(result, ran_backward, limit=100_000):
    """The tensors of ``result`` (a tuple, list or dict of tensors) of a call that ran the
    autograd engine (``ran_backward``; else none) that require grad and whose history still holds
    saved values (``autograd.grad(z, x, retain_graph=True)``, ``z`` returned; a GAN's ``fake``
    after the discriminator's ``backward()`` on ``fake.detach()``): a replay's must have a
    backward (:func:`record_joint`). A loss after its ``backward()`` holds none (released); nor
    does a tensor whose history also reaches a node a backward freed (DCGAN's ``D_x =
    output.mean()`` after ``errD_real.backward()``): a replay returns them with a freed node
    (:func:`node_positions`), a backward through them raising as eagerly. One that holds none
    and was computed after the backward (FGSM's ``x + eps * x.grad.sign()``) is
    :func:`made_after`."""
    if not ran_backward:
        return []
    return [t for t in _tensors_in(result)
            if t.requires_grad and t.grad_fn is not None and history_of(t.grad_fn, limit) == "saved"]


def made_after(result, tracer, limit=100_000):
    """The tensors of ``result`` of a recording that ran a backward which require grad, were
    computed after its first backward (:func:`backward_starts`) and whose history holds no saved
    values (FGSM's ``x + eps * x.grad.sign()``, ``x`` requiring grad): torch's dynamo computes
    them in the graph after its break at the backward, so they carry that graph's live node and a
    backward through them reaches ``x``. A replay's get a backward of their own (:func:`record_joint`)."""
    if not tracer.ran_backward:
        return []
    return [t for t in _tensors_in(result) if t.requires_grad and t.grad_fn is not None
            and tracer.value.get(id(t._data)) not in tracer.made_before and history_of(t.grad_fn, limit) is None]


def record_joint(tracer, result, world):
    """The joint graph's ``(forward node ids, gradients, layouts)`` of a recording whose ``result``
    has tensors that need gradients (:func:`record_backward`), or None. Those are the returned
    tensors requiring grad, but views remade on replay (:mod:`.aliases`); in a call that ran a
    backward, only those whose history it retained (``tracer.retained``, the others returned
    detached): a replay's then have a backward of their own, into the graph's inputs, while the
    call's own backward is replayed in the forward graph (the ``.grad`` it sets, outputs). A
    retained tensor whose backward cannot be recorded is a graph break (:data:`RETAINED`)."""
    retained = tracer.retained = retained_history(result, tracer.ran_backward) + made_after(result, tracer)
    if tracer.ran_backward and not retained:
        return None
    returned = flatten(result) + hidden_bases(flatten(result), tracer.made_here)  # (a view of an input or of
    # another result, or of an unreturned value two results overlap in, is remade on replay: aliases.py;
    # an input no op read, returned as it is (``return y * y, x``), gets its placeholder here, as the output will)
    nodes = [tracer.value.get(id(t._data)) or (tracer.node(t) if id(t._data) in tracer.known else None)
             for t in returned]
    views = {v.position for v in returned_views(tracer.graph, tracer.sources, world, returned, nodes)}
    needing = [t for i, t in enumerate(returned) if t.requires_grad and i not in views
               and (not tracer.ran_backward or any(t is r for r in retained))]
    joint = record_backward(tracer, needing, list(placeholder_tensors(tracer.sources, world))) if needing else None
    if retained and joint is None:
        tracer.graph_break(RETAINED)
    return joint


def node_positions(returned, tracer, limit=100_000):
    """``(freed, live)``: the positions in ``returned`` (a call's returned tensors, in flattening
    order) of those requiring grad whose history reaches a node a backward in the call freed
    (``loss`` after ``loss.backward()``), or holds no saved values and was computed before the
    backward (``w.sum()``: torch's forward graph's output, its node freed): a replay gives them a
    freed node (:func:`.call_nodes.freed_outputs`; the ``eager`` backend frees its ops' nodes that
    saved values); and of those with a backward of their own (``tracer.retained``: :func:`record_joint`)."""
    if not tracer.ran_backward:
        return [], []
    found = []
    for i, t in enumerate(returned):
        if t.requires_grad and t.grad_fn is not None:
            history = history_of(t.grad_fn, limit)
            if history == "freed" or history is None and tracer.value.get(id(t._data)) in tracer.made_before:
                found.append(i)
    return found, [i for i, t in enumerate(returned) if any(t is r for r in tracer.retained)]


def history_of(root, limit=100_000):
    """``"freed"`` when the history from the autograd node ``root`` reaches a freed node (one whose
    saved values a backward released), else ``"saved"`` when it holds saved values, else None."""
    seen, stack, saved = set(), [root], False
    while stack and len(seen) < limit:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        if getattr(node, "_freed", False):
            return "freed"
        seen.add(id(node))
        saved = saved or bool(getattr(node, "_saved", None)) or getattr(node, "_out", None) is not None
        stack += [edge[0] for edge in node.next_functions]
    return "saved" if saved else None


def _tensors_in(value):
    if isinstance(value, Tensor):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    return [t for v in items for t in _tensors_in(v)]


def enables_grad(graph):
    """Whether ``graph`` holds ops the call ran under an ``enable_grad`` of its own (made under
    ``no_grad``: their results may still require grad)."""
    return any(n.meta.get("grad_enabled") for n in graph.nodes)


def apply_compiled(runner, sizes, tensors):
    """The outputs of a replayed joint graph: :class:`CompiledFunction` applied (under
    ``enable_grad`` where the call is made under ``no_grad`` and its function enables grad, so
    that, as eagerly, the results computed there have a backward)."""
    if runner.joint.enables_grad and not STATE.enabled:
        with enable_grad():
            return CompiledFunction.apply(runner, sizes, *tensors)
    return CompiledFunction.apply(runner, sizes, *tensors)


def _reads_mutated(graph):
    """Whether an output of ``graph`` depends on a placeholder the graph writes in place (its
    old value, which a replay after the call no longer finds), other than through the values
    written (the placeholder holds them after the call: :func:`_after_writes`)."""
    depends, written = {p for p, _ in graph.mutations}, _written(graph)
    for n in graph.nodes:
        if n.op == "call_op" and n not in written and depends & set(nodes_in((n.args, n.kwargs))):
            depends.add(n)
    return any(o in depends for o in graph.outputs if isinstance(o, Node))


def _written(graph):
    """``{value node: placeholder}`` of the mutations of ``graph`` (a value of the placeholder's
    shape and dtype, the first placeholder it is written into)."""
    written = {}
    for p, v in graph.mutations:
        if isinstance(v, Node) and v.op == "call_op" and (v.meta.get("shape"), v.meta.get("dtype")) == (
                p.meta.get("shape"), p.meta.get("dtype")):
            written.setdefault(v, p)
    return written


def _after_writes(graph):
    """A copy of the forward ``graph`` of a call that wrote its mutations, for a differentiable
    backward to replay from the call's inputs as they are after it (:func:`_recorded_backward`):
    each value written into a placeholder is read from the placeholder (an optimizer's step,
    then a forward through the stepped parameters: the parameters, whose gradient the forward's
    gives); no mutations."""
    written, env, copied = _written(graph), {}, Graph()
    for p in graph.placeholders:
        env[p] = copied.placeholder(p.name, p.meta)
    for n in graph.nodes:
        if n in written:
            env[n] = env[written[n]]
        elif n.op == "call_op":
            env[n] = copied.call_op(n.target, _remap(n.args, env), _remap(n.kwargs, env), n.meta)
    copied.output([_remap(v, env) for v in graph.outputs])
    copied.symbols, copied.symbol_ranges = graph.symbols, graph.symbol_ranges
    return copied


def split(graph, sources, forward_ids, grads, grad_layouts=None):
    """Cuts a joint graph (its output node holds the user's outputs) into a :class:`Joint`, or
    returns None when it cannot be (a backward node mutates, a saved input is mutated).
    ``grad_layouts``: per gradient, eager's layout (:func:`.layouts.layout_of`)."""
    if any(id(v) not in forward_ids for _, v in graph.mutations):
        return None
    is_grad_output = {n: s[0] == "grad_output" for n, s in zip(graph.placeholders, sources)}
    backward_nodes = [n for n in graph.nodes if n.op == "call_op" and id(n) not in forward_ids]
    in_backward = set(backward_nodes)
    saved = []
    for n in backward_nodes:
        for a in nodes_in((n.args, n.kwargs)):
            if a not in in_backward and not is_grad_output.get(a) and a not in saved:
                saved.append(a)
    # a gradient the backward did not compute (a piecewise-constant op's zeros, made from a
    # constant) reaches the backward graph as a saved value
    saved += [g for _, g in grads if g not in in_backward and not is_grad_output.get(g) and g not in saved]
    if set(saved) & {p for p, _ in graph.mutations}:
        return None
    fwd, fwd_sources, fwd_index = forward_graph(graph, sources, forward_ids, saved)
    bwd, benv = Graph(), {}
    bwd.symbols = graph.symbols
    bwd.symbol_ranges = graph.symbol_ranges
    for n in saved:
        benv[n] = bwd.placeholder(n.name, n.meta)
    for p in graph.placeholders:
        if is_grad_output[p]:
            benv[p] = bwd.placeholder(p.name, p.meta)
    for n in backward_nodes:
        benv[n] = bwd.call_op(n.target, _remap(n.args, benv), _remap(n.kwargs, benv), n.meta)
    bwd.output([benv[g] for _, g in grads])
    slots = [(fwd_index[k], j) for j, (k, _) in enumerate(grads)]
    joint = Joint(fwd, bwd, fwd_sources, len(graph.outputs), slots)
    joint.grad_layouts = grad_layouts or [None] * len(grads)
    joint.saved_inputs = [fwd_index[k] for k, p in enumerate(graph.placeholders) if p in saved]
    return joint


def without_gradients(backward, n_saved, missing):
    """The backward graph for a call where the outputs' gradients at positions ``missing`` (of
    the grad_output placeholders, after the ``n_saved`` saved values) are None (unused outputs:
    eager autograd never runs their branch). Every value computed from those gradients alone is
    zero and left out, instead of fed zeros: ``0 * inf`` would turn a gradient the user does use
    into nan. Returns ``(graph, zero_metas, none_outputs)``: the graph takes the saved values, the
    present gradients, then one zero array per meta of ``zero_metas`` (where a zero meets a
    nonzero value in an op other than an addition), and its outputs at ``none_outputs`` are
    gradients that are None; returns None when such a zero would have a symbolic shape."""
    grads = backward.placeholders[n_saved:]
    zero = {grads[i] for i in missing}          # values that are all zeros (not computed)
    dependent = set(grads)                      # values computed from the output gradients
    keep, needs = {}, []                        # node -> the other argument (an addition); zeros to feed
    for n in backward.nodes:
        if n.op != "call_op":
            continue
        inputs = set(nodes_in((n.args, n.kwargs)))
        if inputs & dependent:
            dependent.add(n)
        zeros = inputs & zero
        if not zeros:
            continue
        if zeros == inputs & dependent:         # linear in the output gradients: zero in, zero out
            zero.add(n)
            continue
        other = [a for a in n.args if a not in zero]
        if getattr(n.target, "name", None) == "Add" and len(other) == 1 and n.kwargs.get("alpha", 1) == 1 \
                and other[0].meta.get("shape") == n.meta.get("shape") and other[0].meta.get("dtype") is n.meta.get("dtype"):
            keep[n] = other[0]
            continue
        for a in sorted(zeros, key=lambda a: a.name):
            if not all(isinstance(d, int) for d in a.meta["shape"]):
                return None
            if a not in needs:
                needs.append(a)
    graph, env = Graph(), {}
    graph.symbols, graph.symbol_ranges = backward.symbols, backward.symbol_ranges
    for p in backward.placeholders:
        if p not in zero:
            env[p] = graph.placeholder(p.name, p.meta)
    for a in needs:
        env[a] = graph.placeholder(f"zeros_{a.name}", a.meta)
    for n in backward.nodes:
        if n.op != "call_op" or (n in zero and n not in needs):
            continue
        if n in keep:
            env[n] = env[keep[n]]
        elif n not in env:
            env[n] = graph.call_op(n.target, _remap(n.args, env), _remap(n.kwargs, env), n.meta)
    outputs = backward.outputs
    none = [j for j, o in enumerate(outputs) if o in zero and o not in needs]
    graph.output([o if not isinstance(o, Node) else env.get(o) for o in outputs])
    return graph, [a.meta for a in needs], none


def forward_graph(graph, sources, forward_ids, saved=()):
    """The forward half of a joint graph (its nodes whose ids are in ``forward_ids``; its
    placeholders but the grad_output ones; its mutations), returning the user's outputs, then
    the nodes ``saved``: ``(graph, its placeholders' sources, {joint placeholder index: forward's})``."""
    fwd, env, fwd_sources, fwd_index = Graph(), {}, [], {}
    for k, (p, s) in enumerate(zip(graph.placeholders, sources)):
        if s[0] != "grad_output":
            env[p] = fwd.placeholder(p.name, p.meta)
            fwd_index[k] = len(fwd_sources)
            fwd_sources.append(s)
    for n in graph.nodes:
        if n.op == "call_op" and id(n) in forward_ids:
            env[n] = fwd.call_op(n.target, _remap(n.args, env), _remap(n.kwargs, env), n.meta)
    for p, v in graph.mutations:
        fwd.mutate(env[p], env[v])
    fwd.output([_remap(v, env) for v in graph.outputs] + [env[n] for n in saved])
    fwd.symbols, fwd.symbol_ranges = graph.symbols, graph.symbol_ranges
    return fwd, fwd_sources, fwd_index


def _remap(value, env):
    if isinstance(value, Node):
        return env[value]
    if isinstance(value, tuple):
        return tuple(_remap(v, env) for v in value)
    if isinstance(value, list):
        return [_remap(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _remap(v, env) for k, v in value.items()}
    return value


class CompiledFunction(Function):
    """The autograd node of a replayed joint graph: ``forward`` runs the forward graph on the
    placeholders' arrays, ``backward`` the backward graph on the saved arrays and the output
    gradients, giving one gradient per placeholder (None where none flows). ``sizes`` holds
    the values of a dynamic graph's size symbols for this call (None for a static graph).

    Under ``create_graph=True`` the gradients must themselves be differentiable, which arrays
    are not: ``backward`` then replays both graphs through the dispatcher (:func:`_recorded_backward`)."""

    @staticmethod
    def forward(ctx, runner, sizes, *tensors):
        # what a differentiable backward replays the forward from: the inputs, as they were
        ctx.inputs, ctx.versions = tensors, [t._versions[0] for t in tensors]
        ctx.rng_state = _random.get_rng_state() if runner.joint.draws else None
        results = runner.invoke(runner.run_forward, [t._data for t in tensors], sizes)
        for i in runner.mutated:
            tensors[i]._versions[0] += 1
        n = runner.joint.n_outputs
        ctx.runner, ctx.saved_arrays, ctx.sizes = runner, results[n:], sizes
        ctx.set_materialize_grads(False)  # an unused output's gradient is None (see backward)
        outputs = tuple(Tensor._make(laid_out(np.asarray(a), layout))  # as eager laid them out
                        for a, layout in zip(results[:n], runner.layouts))
        ctx.output_shapes = [t._data.shape for t, o in zip(outputs, runner.joint.forward.outputs)
                             if o.meta.get("requires_grad")]
        ctx.results = [(weakref.ref(outputs[i]), outputs[i]._versions) for i in runner.joint.saved_results]
        # those eager gives without grad (x.t() of an input not requiring it) stay so, as torch's
        ctx.mark_non_differentiable(*[t for t, o in zip(outputs, runner.joint.forward.outputs)
                                      if not o.meta.get("requires_grad")])
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        runner = ctx.runner
        # the backward graph takes the gradients of the outputs that require grad only
        wanted = [g for g, o in zip(grads, runner.joint.forward.outputs) if o.meta.get("requires_grad")]
        if STATE.enabled:  # create_graph=True: the engine records what backward computes
            return _recorded_backward(ctx, wanted)
        _check_versions(ctx, runner.joint.saved_inputs)
        missing = tuple(i for i, g in enumerate(wanted) if g is None)
        if missing:  # outputs the loss did not use: their branch of the backward is left out
            run, tail = runner.backward_without(missing, wanted, ctx.output_shapes)
        else:
            run, tail = runner.run_backward, [g._data for g in wanted]
        arrays = runner.invoke(run, list(ctx.saved_arrays) + tail, ctx.sizes)
        result = [None] * (2 + runner.n_inputs)
        for k, j in runner.joint.grad_slots:
            if arrays[j] is not None:
                result[2 + k] = Tensor._make(laid_out(np.asarray(arrays[j]), runner.joint.grad_layouts[j]))
        return tuple(result)


def _check_versions(ctx, inputs):
    """torch's RuntimeError when one of the call's ``inputs`` (positions; none the graph writes
    itself) or a result the backward reads (``y`` of ``y = x.exp()``) was written in place since
    the call: the backward would read its new values."""
    for ref, versions in ctx.results:
        if versions[0] != 0:
            t = ref()
            if t is None:  # (only a view of it is left: named as a tensor of that version)
                t = Tensor._make(np.zeros(()))
                t._versions = versions
            raise modified_error(t, 0, t._grad_fn)
    for i in inputs:
        t, version = ctx.inputs[i], ctx.versions[i]
        if t._versions[0] != version:
            raise modified_error(t, version, t._grad_fn)


def _recorded_backward(ctx, wanted):
    """The gradients of a replayed joint graph as tensors with autograd history (``create_graph=
    True``; torch's compiled autograd refuses double backward): the forward graph is replayed
    through the dispatcher from the call's inputs, its random draws from the generator state the
    call started with (the stream is restored after), giving the saved values with their history;
    then the backward graph, on those and the output gradients. Costs one more forward, only
    when a gradient of a gradient is asked for."""
    runner, joint = ctx.runner, ctx.runner.joint
    # the inputs the graph writes (running statistics) are not read back: see reads_mutated
    _check_versions(ctx, [i for i in range(len(ctx.inputs)) if i not in runner.mutated])
    if joint.reads_mutated:
        raise RuntimeError("ember.compile: a gradient of a gradient (create_graph=True) through a compiled "
                           "graph that writes one of its inputs in place and reads its old value is not "
                           "supported; run this function eagerly (ember.compiler.disable)")
    if joint.recorded is None:  # (the call wrote the mutations already)
        joint.recorded = replay.dispatch(_after_writes(joint.forward)), {}
    run_forward, backwards = joint.recorded
    if ctx.rng_state is not None:
        state = _random.get_rng_state()
        _random.set_rng_state(ctx.rng_state)
    try:
        saved = runner.invoke(run_forward, list(ctx.inputs), ctx.sizes)[joint.n_outputs:]
    finally:
        if ctx.rng_state is not None:
            _random.set_rng_state(state)
    # outputs the loss did not use: their branch left out, as in backward (no zero gradient
    # flows into an input: a leaf's .grad stays None, a freed history is not reached)
    missing = tuple(i for i, g in enumerate(wanted) if g is None)
    if missing not in backwards:
        pruned = without_gradients(joint.backward, len(saved), missing) if missing else None
        backwards[missing] = (replay.dispatch(pruned[0]), pruned[1]) if pruned else (replay.dispatch(joint.backward), None)
    run_backward, metas = backwards[missing]
    if metas is None:
        dtypes = [p.meta["dtype"] for p in joint.backward.placeholders[len(saved):]]
        grads = [Tensor._make(np.zeros(shape, d.np)) if g is None else g
                 for g, shape, d in zip(wanted, ctx.output_shapes, dtypes)]
    else:
        grads = [g for g in wanted if g is not None] + [Tensor._make(np.zeros(m["shape"], m["dtype"].np)) for m in metas]
    results = runner.invoke(run_backward, saved + grads, ctx.sizes)
    gradients = [None] * (2 + runner.n_inputs)
    for k, j in joint.grad_slots:
        gradients[2 + k] = results[j]
    return tuple(gradients)
