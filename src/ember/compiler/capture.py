"""Capture: run a function once, eagerly, while recording every op it dispatches into a Graph.

The tracer is one entry of the dispatcher's observer list (``ember._ops.core.OBSERVERS``): it
sees each op with its inputs, attrs and output, each in-place write (``write_into``), and each
autograd node the engine runs (so ``loss.backward()``, the gradient accumulation into ``.grad``
and the optimizer's update ops land in the same graph). Values are followed by their backend
array: an array first met as an op's output is a node; any other array becomes a placeholder
with a *source* saying where to find it on the next call (an argument, a parameter, a ``.grad``,
an optimizer's state, a fixed tensor, or a constant made inside the function). In-place writes
into a placeholder's array become the graph's mutations; into an intermediate, its new value.

What needs a Python value (``.item()``, ``bool(t)``, ``.numpy()``, printing, random draws) is a
*graph break*: recorded with its reason, the user's line and frames; the function is split there (split.py).

Limits of capturing by running (torch's bytecode analysis has fewer): Python side effects other than tensor
writes, ``.grad``, optimizer state, numbers written into its groups (:mod:`.group_replay`) and ``requires_grad_()``
on an input happen on the recorded call only: graph breaks. Numbers read from globals, closures and objects are
followed (:mod:`.traced_reads`, :mod:`.closure_ints`), other Python values read there are not guarded; tensor and
module backward hooks are not replayed. Tensor methods and ops are patched while any thread records, each call seen
by the recordings of its own thread (:mod:`.tensor_patches`).
"""
import operator
import os
import sys
import threading
import weakref

import numpy as np

from .._dtype import from_numpy_dtype, get_default_dtype, result_type
from .. import _creation
from .._backend.sparse import SparseCOO
from .._creation import ToDtype
from .._ops.complex import ViewAsComplex, ViewAsReal
from .._ops.core import CopySlices
from .._ops.shape import Clone, Detach, Expand
from .._ops import core as _core
from .._tensor import Tensor
from .breaks import SPARSE, observed, unobserved
from .exc import Unsupported
from ..autograd.grad_mode import STATE
from .aot import (EARLIER, RETAINED, backward_starts, enables_grad, into_earlier, node_positions, record_joint, released,
                  retained_history, runs_hooks)
from .aliases import hidden_bases, returned_views
from .attribute_sets import (as_before, attributes_before, extra, float_attributes_set, noted, noted_floats, set_floats,
                             tensor_attributes_set, unguarded_names)
from .inner_views import strided_layout
from .input_grads import grad_layouts, hide_grads, input_grad_sets, input_hooks, merge_grads
from .layouts import layout_of
from .graph import Graph
from .group_replay import GROUPS, group_writes, hyperparameter_inputs, replay_writes, snapshot
from .mode_appends import appended, mode_lists, replay_appends
from .path_writes import as_before as paths_as_before, float_writes, floats_at, replay_writes as replay_path_writes
from .patches import breaking_print
from .side_effects import REQUIRES_GRAD, aliased_results, breaking_io, checked_reads, python_state, unreplayable
from .traced_floats import float_nodes
from .traced_ints import TRACING, numbers_passed, plain, traced_operands
from .sources import found_again, history_nodes, input_names, known_arrays, root_array, world_arrays, written_view_of
# flatten, skeleton, unflatten, LoopInt and input_names are imported from here too
from .tensor_patches import record_on_this_thread
from .structure import (_LOOP_INT_USE, EMBER_DIR as _EMBER_DIR, LoopInt, _has_loop_int, flatten, frames_below,
                        holds_arrays, skeleton, unflatten, user_frame)

__all__ = ["capture", "Capture", "Tracer", "user_frame", "flatten", "unflatten", "input_names"]

# Where tensors of constants are made: an array these wrap during a call is a constant of the graph.
_FACTORY_FILES = {_core.__file__, sys.modules[Tensor.__module__].__file__, os.path.join(_EMBER_DIR, "_creation.py")}
# The factories that wrap memory the caller holds (a NumPy array, a buffer; the caller may write into it): no constant
_SHARING = {_creation.from_numpy.__code__, _creation.as_tensor.__code__, _creation.frombuffer.__code__}


class Capture:
    """What one recording produced.

    Attributes:
        graph: the Graph (empty of ops when nothing was dispatched).
        pieces: the graphs between graph breaks, in order (``[graph]`` without breaks).
        sources: one per placeholder: ``("input", i)``, ``("tensor", t)``, ``("grad", p)``,
            ``("state", optimizer, p, key)``, ``("const", array)``, ``("float_arg", position)``.
        output: the :func:`skeleton` of the function's return value (rebuilt on replay).
        output_nodes: the graph outputs the return value's tensors map to, in flattening order.
        grad_sets: ``(param, output index or None)``: ``param.grad`` after the call (an output, or None).
        input_grad_sets: ``(input position, output index or None, adds)``: the same for inputs (input_grads.py).
        group_writes, path_writes: the writes into optimizers' groups, dicts and objects a replay repeats
            (group_replay.py, path_writes.py); appends: a logging mode's appends to its lists (mode_appends.py).
        grad_required: the input positions a replay makes require grad before the graph (``x.requires_grad_()``).
        attr_sets: ``(module ref, id, name, output index)``: a module attribute set to an output
            (:mod:`.attribute_sets`); float_sets: one set to a float computed from the arguments.
        layouts: per output, eager's layout (:func:`.layouts.layout_of`; None: row-major).
        views: the outputs that are views of an input or of another output (:class:`.aliases.View`).
        breaks: ``(reason, "file:line: code")`` of each graph break; empty when replayable.
        break_frames: per break met while running, ``(code, line)`` of each frame inside the recording
            (:func:`~.structure.frames_below`; empty: before or after the call).
        ran_backward: the function ran the autograd engine; freed: the outputs whose history it freed; live: those it retained.
        rewrote: an input requiring grad written twice, or its value read as another tensor's (``w.copy_(new)``).
        joint: for outputs that need gradients: ``(ids of the forward's nodes, [(placeholder index, gradient
            Node)])``: the graph continues with their backward (:mod:`.aot`). read_names: :func:`.side_effects.names_read`."""

    def __init__(self, graph, sources):
        self.graph, self.sources, self.grad_written = graph, sources, set()  # (whose .grad the call set first)
        self.output, self.output_nodes, self.grad_sets, self.layouts, self.views = None, [], [], [], []
        self.attr_sets, self.float_sets, self.freed, self.live = [], [], [], []  # (a replay gives them a freed node, aot.py)
        self.breaks, self.ran_backward, self.reads_grad, self.pieces, self.read_names = [], False, frozenset(), [graph], None
        self.group_writes, self.path_writes, self.grad_required, self.input_grad_sets, self.input_hooks = [], [], [], [], []

    def require_grads(self, inputs):
        """Makes the call's ``inputs`` (``World.inputs``) at ``grad_required`` require grad, before a replay."""
        for i in self.grad_required:
            inputs[i].requires_grad_()

    def replay_writes(self, fn, args, kwargs, reads=()):
        """Repeats the ``group_writes``, ``path_writes``, ``float_sets``, ``appends`` of a call of ``fn`` (reads: floats)."""
        if self.group_writes:
            replay_writes(self.group_writes, args, kwargs, reads)
        replay_path_writes(self.path_writes, fn, args, kwargs, reads)
        set_floats(self.float_sets, args, kwargs, reads)
        replay_appends(self.appends)


class Tracer(_core.Observer):
    """The observer that builds the graph while the function runs."""
    history, reads_grad, retained, appends = frozenset(), frozenset(), (), []  # ids: nodes made before the call, tensors whose .grad it read; aot.py
    double, group_before, stashed, hooks_added, rewrote = False, {}, {}, (), False  # create_graph backward ran; group_replay; input_grads; Capture

    def __init__(self, known, fullgraph):
        self.graph, self.grad_written = Graph(), set()
        self.known = known          # id(array) -> (source, name) for arrays known before the call
        self.fullgraph, self.sources, self.grad_mode = fullgraph, [], STATE.enabled  # (None: recording backward)
        self.value = {}             # id(array) -> Node holding its current value
        self.keep = []              # arrays held for the whole recording (known ones: their ids stay theirs)
        self.refs = {}              # id(array) -> weak reference of each array seen (see hold)
        self.held = []              # those references, in the order seen
        self.over, self.indexed = {}, 0  # id(root array) -> references of held[:indexed] over its memory
        self.made = {}              # id(array) -> None (a factory's constant) or why reading it breaks
        self.stale, self.numbers = set(), {}  # ids of views whose base was written in place since; see made_by
        self.breaks, self.pieces, self.break_frames, self.earlier, self.ran_backward = [], [], [], {}, False
        self.placeholder_of, self.control_flow_grad, self.grad_fns = {}, False, {}  # see hop.py; aot.into_earlier
        self.untracked, self.written = [], {}  # (view's array, source, op) per conj / view_as_real view; see arg
        self.free = {}              # id(array) -> the tensor of a closure or a global holding it
        self.hyper = {}             # (id(optimizer), group index, key) -> placeholder of a hyperparameter
        self.grad_required = set()  # the input positions made to require grad, unread before (tensor_patches.py)
        self.groups = None          # id(parameter's array) -> (optimizer, group index), made when needed
        self.thread = threading.get_ident()  # (the observer list is every thread's: others' ops are not its)

    # ---- observer protocol ------------------------------------------------------------------
    def op_enter(self, op, inputs, attrs):
        """While int arguments are traced (:mod:`.traced_ints`), the op runs on (and records)
        their plain values: NumPy takes an int subclass as an int64 array, not as a Python number."""
        if TRACING.value and self.thread == threading.get_ident():  # (and traced floats' positions: traced_floats.py)
            self.traced_now, self.floats_now = traced_operands(op, inputs, attrs)
            return tuple(map(plain, inputs)), {k: plain(v) for k, v in attrs.items()}
        return None

    def op_exit(self, op, inputs, attrs, output):
        """Records the op that just ran as a ``call_op`` node on its inputs' nodes (cast as the op
        promotes them), binds its results to the new node, and records an in-place op as the
        functional op then a write per updated input; an array attribute or a loop counter used
        as a number breaks the graph instead."""
        if output is None or self.thread != threading.get_ident():
            return
        if any(map(_has_loop_int, attrs.values())):
            self.graph_break(_LOOP_INT_USE)
        if any(map(holds_arrays, attrs.values())):  # index arrays: graph values
            breaks = len(self.breaks)
            attrs = {k: self.attr(v, op) for k, v in attrs.items()}
            if len(self.breaks) > breaks:
                return
        dtype = None
        if op.promote is not None:
            dtype = result_type(*inputs)
            if op.promote == "float" and not dtype.is_inexact:
                dtype = get_default_dtype()
        args = tuple(self.arg(x, dtype) for x in inputs)
        inplace = attrs.get("inplace") and getattr(op, "mutates", None)
        if getattr(op, "hyperparameters", None):  # (first: a number written into the group is no float use)
            breaks, args = len(self.breaks), hyperparameter_inputs(self, op, inputs, args)
            if len(self.breaks) > breaks:  # (the update runs between two pieces: the next reads its results)
                return
        if TRACING.value:
            op, args, attrs = float_nodes(self, op, args, attrs, dtype, output)
        if inplace:  # recorded as the functional op, then a write per updated input
            attrs = dict(attrs, inplace=False)
        if getattr(op, "untracked_view", False):
            # a view whose memory NumPy does not trace to its input (view_as_real, conj): its
            # values are recorded; a write into either side later cannot be (see op_write)
            self.untracked.append((output._data, inputs[0], op))
        meta = _meta(output) if isinstance(output, Tensor) else {"num_outputs": len(output)}
        if self.grad_mode is not None and STATE.enabled != self.grad_mode:  # enable_grad / no_grad inside
            meta["grad_enabled"] = STATE.enabled  # (a replay through the dispatcher runs it so: replay.py)
        node = self.graph.call_op(op, args, attrs, meta)
        if TRACING.value:
            self.graph.traced_operands[node] = self.traced_now
        self.bind(output, node)
        if inplace:  # (the recorded op's mutates: float_nodes may record another op)
            for i, result in zip([i for i in inplace if inputs[i] is not None], output):
                self.op_write(inputs[i], result)

    def group_of(self, t):
        """``(optimizer, group index)`` holding parameter ``t`` (or the one it views as real), or None."""
        if self.groups is None:
            self.groups = {id(p._data): (opt, index) for opt in self.world.optimizers
                           for index, group in enumerate(opt.param_groups) for p in group["params"]}
        array = t._data
        for view, source, op in self.untracked:
            if view is array and op is ViewAsReal:
                array = source._data
        return self.groups.get(id(array))

    def op_write(self, target, result):
        """Records ``result`` written into tensor ``target`` (an in-place op, ``copy_``, a
        setitem): the write becomes the target's new value, cast and broadcast as the write does."""
        if self.thread != threading.get_ident():
            return
        array, value = target._data, self.node(result)
        grad = result.requires_grad  # (then target and base do: eager marks them after its observers)
        if value.meta["dtype"] is not target.dtype:
            value = self.graph.call_op(ToDtype, (value,), {"dtype": target.dtype}, _meta(target, grad))
        if value.meta["shape"] != array.shape:
            value = self.graph.call_op(Expand, (value,), {"shape": array.shape}, _meta(target, grad))
        if self.untracked:
            written = self.untracked_write(target, value)
            if written is None:
                return self.graph_break("in-place write into a view the graph cannot follow to its base")
            target, value = written
            array = target._data
        root, base, view, written_value = root_array(array), target._base, array, value
        if root is array and base is not None and base._data is not array:
            # a view whose memory NumPy does not trace to its base (view_as_real, a conj view):
            # the write's effect on the base cannot be recorded
            return self.graph_break("in-place write into a view the graph cannot follow to its base")
        tracks = lambda a: id(a) in self.value or id(a) in self.known  # noqa: E731
        if root is not array and (written := written_view_of(target, self.world, tracks)) is not None:
            # a write into a view is a new value of its base (whose array may be a view: randn's)
            base, chain = written
            value = self.graph.call_op(CopySlices, (self.node(base), value), {"chain": chain}, _meta(base, grad))
            target, array = base, base._data
        elif root is not array and id(array) not in self.known and (tracks(root) or any(
                np.may_share_memory(array, a) for a in world_arrays(self.world) if id(a) in self.known)):
            return self.graph_break("in-place write into a view whose base is not known")
        for kept in self.kept_over(root):  # other views of the written array now hold values the graph lost
            if kept is not array and kept is not view and id(kept) in self.value:
                self.stale.add(id(kept))
        if id(array) in self.placeholder_of or id(array) in self.known:
            placeholder = self.placeholder_of.get(id(array)) or self.node(target)
            self.rewrote = self.graph.write(placeholder, value) and target.requires_grad or self.rewrote
            self.written.update({value: array} if target.requires_grad else ())  # (read as another tensor's: arg)
        self.value[id(array)], self.value[id(view)] = value, written_value  # (the view read again: what it got)
        self.hold(array), self.hold(view)  # (the view's id is forgotten with it)

    def hold(self, array):
        """Follows ``array`` while it lives; when it dies, its id (free for a new array) is
        forgotten. Holding every array instead kept all of a step's temporaries alive: the
        tiny GPT step recorded in 47 MB of fresh pages more than it ran eagerly, 30-40 ms."""
        key = id(array)
        if key not in self.refs:
            try:
                ref = _Ref(array, self.forget)
            except TypeError:  # an array type without weak references: held until the end
                self.keep.append(array)
                ref = lambda: array  # noqa: E731
            ref.key, self.refs[key] = key, ref
            self.held.append(ref)

    def forget(self, ref):
        """Drops what is known of a freed held array (``ref``'s callback): a new array may get its id."""
        key = ref.key
        for table in (self.refs, self.value, self.made, self.placeholder_of, self.earlier, self.numbers):
            if key in table:  # (del, not pop: a method call costs a call of the recording's hook)
                del table[key]
        self.stale.discard(key)

    def live(self):
        """The arrays seen that are alive."""
        return [a for a in (ref() for ref in self.held) if a is not None]

    def kept_over(self, root):
        """The live arrays seen over ``root``'s memory, indexed as ``held`` grows (it only
        grows): a scan of all of it per write made recording a step quadratic in its ops."""
        for ref in self.held[self.indexed:]:
            array = ref()
            if array is not None:
                self.over.setdefault(id(root_array(array)), []).append(ref)
        self.indexed = len(self.held)
        return [a for a in (ref() for ref in self.over.get(id(root), ())) if a is not None]

    def untracked_write(self, target, value):
        """(target, value) of a write, moved from a whole ``view_as_real`` view to its complex
        base (an optimizer's step on complex parameters); None when it lands in another view
        of :attr:`untracked`. Those views of the written memory now hold old values: stale."""
        array, moved = target._data, None
        for view, source, op in self.untracked:
            if view is array and op is ViewAsReal:
                self.value[id(view)], moved = value, view
                if value.target is Expand:  # ViewAsComplex reads pairs of contiguous numbers
                    value = self.graph.call_op(Clone, (value,), {}, dict(value.meta))
                value = self.graph.call_op(ViewAsComplex, (value,), {}, _meta(source))
                target, array = source, source._data
                break
        for view, source, _ in self.untracked:
            if view is moved:
                continue
            if np.may_share_memory(source._data, array):
                self.stale.update(id(kept) for kept in self.live()
                                  if kept is not array and root_array(kept) is root_array(view))
            elif np.may_share_memory(view, array):
                return None
        return target, value

    def node_enter(self, node):
        """The engine's observer call before an autograd node runs in a traced backward: breaks
        the graph where the backward runs Python it cannot hold (hooks, control flow) or makes
        gradients with history (create_graph)."""
        if self.thread != threading.get_ident():
            return
        if runs_hooks(node):
            self.hooked_backward()
        if STATE.enabled:
            self.graph_break("autograd.grad or backward with create_graph=True inside the compiled function")
            self.double = True
        elif self.double:  # (a gradient penalty's loss.backward(): through the eager gradients' history)
            self.double = False  # (as torch's dynamo, which breaks at every backward)
            self.graph_break("backward after an autograd.grad with create_graph=True (through its gradients' history)")
        if into_earlier(self, node):  # (split there: the backward runs eagerly, through the pieces' backwards)
            self.graph_break(EARLIER)
        if id(node) in self.history:  # its saved values are no placeholders: a replay would reuse them
            self.graph_break("backward into the history of an input tensor (made before the compiled function ran)")
        if self.control_flow_grad:  # its autograd nodes read values the graph does not hold
            self.graph_break("backward through a control-flow operator without a recorded backward (while_loop) "
                             "inside the compiled function")
        self.ran_backward = self.ran_backward or backward_starts(self)

    def hooked_backward(self):
        """Breaks the graph at a backward hook."""
        # a hook is Python the graph cannot replay (DDP's gradient averaging calls MPI)
        self.graph_break("a backward hook (Tensor.register_hook; DistributedDataParallel averages "
                         "gradients with them) runs in the backward")

    def made_here(self, t):
        """Whether tensor ``t``'s value is an op's result in this recording (this piece's or an earlier one's)."""
        node = self.value.get(id(t._data)) or self.earlier.get(id(t._data))
        return node is not None and node.op == "call_op"

    def made_by(self, array, frame):
        """Notes an array wrapped into a tensor during the call (``frame``: the wrapping call's):
        made by a factory, a constant of the graph; over memory the caller holds (``from_numpy``,
        ``as_tensor``, ``frombuffer``: the caller may write into it between calls) or computed
        by code outside the dispatcher, a graph break when read. A new handle on an array already
        noted (``ones(2).type_as(longs)`` detaches the factory's ones first) keeps its note."""
        if id(array) in self.value or id(array) in self.made:
            return
        code = frame.f_code
        factory = frame if code in _SHARING else frame.f_back  # (frombuffer wraps through _finish)
        if factory.f_code in _SHARING and not factory.f_back.f_code.co_filename.startswith(_EMBER_DIR + os.sep):
            # called by the user (ember's own calls wrap arrays they computed: interpolate's indices)
            self.made[id(array)] = (f"a tensor made by {factory.f_code.co_name} shares memory with an array "
                                    f"or buffer from outside the function (its values may change between calls)")
        elif code.co_filename in _FACTORY_FILES:  # (given a float: its constant's values checked, note_unseen)
            self.made[id(array)] = None
            self.numbers.update({id(array): True} if TRACING.value and numbers_passed(frame) else {})
        else:
            self.made[id(array)] = (f"a tensor computed outside the dispatcher (in {code.co_name}, "
                                    f"{os.path.basename(code.co_filename)}:{code.co_firstlineno})")
        self.hold(array)

    # ---- values -----------------------------------------------------------------------------
    def arg(self, x, dtype):
        """The graph argument for an op input ``x``: a tensor's node (detached or cast to
        ``dtype`` when the op does that), tuples and lists element by element, a NumPy scalar as
        the Python number it holds (as eager and torch read it), other values as they are."""
        if isinstance(x, LoopInt):
            self.graph_break(_LOOP_INT_USE)
        if isinstance(x, Tensor):
            # a sparse tensor breaks the graph (as torch's dynamo does where it meets one), once a line
            if type(x._data) is SparseCOO and (not self.breaks or self.breaks[-1] != (SPARSE, user_frame())):
                self.graph_break(SPARSE)
            node = self.node(x)
            self.rewrote = self.rewrote or self.written.get(node, x._data) is not x._data  # w.copy_(new); new * 2
            if not x.requires_grad and node.meta.get("requires_grad"):  # x.detach(): one array, two tensors
                node = self.graph.call_op(Detach, (node,), {}, dict(node.meta, requires_grad=False))
            if dtype is not None and x.dtype is not dtype:
                node = self.graph.call_op(ToDtype, (node,), {"dtype": dtype}, dict(node.meta, dtype=dtype))
            return node
        if isinstance(x, (tuple, list)):
            return type(x)(self.arg(v, dtype) for v in x)
        return x.item() if isinstance(x, np.generic) else x

    def attr(self, value, op):
        """An attr of ``op`` with each array in it (an index: ``x[i]``, ``gather``'s, the
        indices ``max(x, dim)`` returned, read by its gradient) replaced by its node: the value
        of an op's result, a placeholder for an input, or a constant made in the function. An
        array computed outside the dispatcher breaks the graph."""
        if isinstance(value, (tuple, list)):
            return type(value)(self.attr(v, op) for v in value)
        if not isinstance(value, np.ndarray):
            return value
        key = id(value)
        free = self.free.get(key)  # a tensor of a closure or a global: a fixed tensor's placeholder
        if free is None and not (key in self.value or key in self.known or self.made.get(key, 0) is None):
            return self.graph_break(f"{op.name} takes an array computed outside the graph as an attribute"
                                    + (f": {self.made[key]}" if self.made.get(key) else ""))
        node = self.node(_Array(value) if free is None else free)  # (a factory's array: a constant)
        if value.dtype == np.bool_ and getattr(op, "mask_sets_shape", False) and not (
                node.op == "placeholder" and self.sources[self.graph.placeholders.index(node)][0] == "const"):
            self.graph_break(f"{op.name} with a boolean mask that is not a constant (the result's shape "
                             f"depends on its values)")
        return node

    def node(self, t):
        """The node of tensor ``t``'s current value, a new placeholder for an array met first."""
        array, key = t._data, id(t._data)
        if key in self.stale:
            self.graph_break("read of a view after an in-place write into its base")
        node = self.value.get(key)
        if node is not None:
            return node
        if key in self.known:
            source, name = self.known[key]
        elif key in self.made and key not in self.earlier:  # (an earlier piece's value: an input)
            if self.made[key] is not None:
                self.graph_break(self.made[key])
            source, name = ("const", array.copy("K")), "const"  # (in its layout: returned, it keeps it)
            self.numbers.update({id(source[1]): True} if key in self.numbers else {})
        elif root_array(array) is not array and id(root_array(array)) in self.value:
            self.graph_break("a view of a tensor taken outside the dispatcher")
            source, name = ("const", array.copy()), "const"
        else:
            source, name = ("tensor", t), "tensor"
        # the meta of what the placeholder stands for: an input read first through x.detach()
        # still requires grad (its readers then read a Detach of it)
        stands_for = self.world.inputs[source[1]] if source[0] == "input" else source[1] if source[0] == "param" else t
        node = self.graph.placeholder(name, _meta(stands_for))
        self.sources.append(source)
        self.value[key] = self.placeholder_of[key] = node
        self.hold(array)
        return node

    def bind(self, output, node):
        """Makes ``node`` the value of the op's result ``output`` (a tensor, or each tensor of a
        tuple through a getitem node)."""
        if isinstance(output, Tensor):
            self.value[id(output._data)] = node
            self.hold(output._data)
            if output._grad_fn is not None:
                self.grad_fns[id(output._grad_fn)] = len(self.pieces), weakref.ref(output._grad_fn)
            return
        for i, t in enumerate(output):  # several results: one getitem node each
            if t is not None:
                self.bind(t, self.graph.call_op(operator.getitem, (node, i), {}, _meta(t)))

    def graph_break(self, reason):
        """Ends the current piece at a graph break (``reason``, with the user's source line): what follows is
        traced into a new graph; ``fullgraph=True`` raises Unsupported; another thread's code does not break it."""
        if self.thread != threading.get_ident():
            return
        where = user_frame()
        if self.fullgraph:
            raise Unsupported(f"graph break (fullgraph=True): {reason}\n  at {where}")
        if self.breaks and self.breaks[-1][1] == where and len(self.graph.nodes) == len(self.graph.placeholders):
            return  # (the statement breaks already, no op since: print(t) prints and reads t, one break as torch's)
        self.breaks.append((reason, where))
        self.break_frames.append(frames_below(capture.__code__))
        # What follows is a new piece: values of the previous one are its inputs.
        self.earlier.update(self.value)
        self.pieces.append(self.graph)
        self.graph = Graph()
        self.value, self.placeholder_of, self.sources, self.stale, self.hyper = {}, {}, [], set(), {}
        self.control_flow_grad = False


class _Ref(weakref.ref):
    __slots__ = ("key",)


class _Array:
    """An array met without its tensor (an op's attr), as :meth:`Tracer.node` reads tensors."""
    def __init__(self, array):
        self._data, self.dtype, self.requires_grad = array, from_numpy_dtype(array.dtype), False


def _meta(t, requires_grad=False):  # (a node's meta: t's shape, dtype; requiring grad where t or requires_grad does)
    return {"shape": tuple(t._data.shape), "dtype": t.dtype, "requires_grad": bool(t.requires_grad or requires_grad)}


def capture(fn, args, kwargs, world, fullgraph=False, joint=True):
    """Runs ``fn(*args, **kwargs)`` once, eagerly, recording it; returns ``(result, Capture)``.

    ``world`` (a :class:`~.guards.World`) holds what can be found again on the next call: the
    inputs, the parameters (whose ``.grad`` the call may read or set) and the optimizers (whose
    state it may read and update). ``joint=False`` records no backward for outputs that
    require grad (``make_fx``, ``export``)."""
    tracer = Tracer(known_arrays(world, args, kwargs), fullgraph)
    tracer.world, tracer.free, tracer.history = world, {id(t._data): t for t in world.free}, unobserved(history_nodes, world)
    tracer.keep += [a for a in world_arrays(world)]
    for array in tracer.keep:
        tracer.hold(array)
    cap_joint, lists = None, mode_lists()
    end_recording = record_on_this_thread(tracer)  # (Tensor methods breaking, tensors made, random draws)
    before, restore_print, restore_io = python_state(world, True), breaking_print(tracer.graph_break), breaking_io(tracer.graph_break)
    # (the inputs' .grad held aside: the graph computes what the call adds, input_grads.py)
    tracer.group_before, (tracer.stashed, tracer.hooked) = snapshot(world.optimizers), hide_grads(world.inputs)
    arrays, attributes, sets, floats = [t._data for t in world.inputs], attributes_before(world), [], []
    paths = floats_at(fn, args, kwargs)  # (``cfg["lr"] = cfg["lr"] * 0.5``: path_writes.py)
    _core.OBSERVERS.append(tracer)
    try:
        if world.unguarded:
            tracer.graph_break(world.unguarded)
        result = observed(fn, *args, **kwargs)  # (what is around it is ember's work, unobserved where called so)
        tracer.grad_mode = None  # (the backward recorded below runs under its own grad modes)
        written = {p for p, _ in tracer.graph.mutations}  # (unwritten inputs may overlap: x[:-1], x[1:])
        if written and world.overlapping({key for key, p in tracer.placeholder_of.items() if p in written}):
            tracer.graph_break("an in-place write into a tensor whose memory another input, global or parameter "
                               "overlaps (views of one tensor): a replay would not see the write through the other")
        if any([t._data is not a for t, a in zip(world.inputs, arrays)]):  # a replay writes into the old array
            tracer.graph_break("an input tensor's array was replaced (.data =, set_(), resize_() or a resized out=)")
        writes = group_writes(world.optimizers, tracer.group_before)  # (replayed: no side effect)
        before[REQUIRES_GRAD] = [g or i in tracer.grad_required for i, g in enumerate(before[REQUIRES_GRAD])]
        sets = tensor_attributes_set(attributes, tracer.made_here)  # (``self.mask = mask``: set after each replay)
        floats = float_attributes_set(attributes)  # (``self.scale = lr * 2``: set after each replay)
        path_writes, floats_written = float_writes(paths, fn, args, kwargs, {(id(vars(m)), k) for m, k, *_ in floats})
        with as_before(sets + floats), paths_as_before(path_writes, fn, args, kwargs), appended(lists) as tracer.appends:
            changed = next((k for k, v in python_state(world).items() if before.get(k, v) != v
                            and (writes is None or not k.startswith(GROUPS))), None)
        if changed is not None:  # a replay runs the graph only: the side effect would be lost
            tracer.graph_break(f"a Python side effect: {changed} changed during the call (a replay would "
                               f"not repeat it, so the function runs eagerly)")
        if (why := unobserved(unreplayable, result, world)) is not None:
            tracer.graph_break(why)
        # non-branching control flow: gradients by replaying it with autograd; branching: backward recorded (hop)
        if not tracer.breaks and (STATE.enabled or enables_grad(tracer.graph)) and joint \
                and not tracer.control_flow_grad:  # (enable_grad inside a call under no_grad: aot.py)
            cap_joint = unobserved(record_joint, tracer, result, world)  # (the returned tensors' backward, where wanted)
        elif retained_history(result, tracer.ran_backward):
            tracer.graph_break(RETAINED)
    finally:
        _core.OBSERVERS.remove(tracer)
        tracer.grad_ends = merge_grads(tracer.stashed)
        restore_print()
        read_names = restore_io(unguarded_names(floats, world.all_modules))
        end_recording()
    cap = Capture(tracer.graph, tracer.sources)
    cap.breaks, cap.ran_backward, cap.output, cap.rewrote = tracer.breaks, tracer.ran_backward, skeleton(result), tracer.rewrote
    cap.break_frames, cap.reads_grad, cap.grad_written = tracer.break_frames, tracer.reads_grad, tracer.grad_written
    cap.group_writes, cap.grad_required, cap.numbers, cap.appends = writes or [], sorted(tracer.grad_required), tracer.numbers, tracer.appends
    cap.path_writes, cap.floats_written = path_writes, floats_written
    cap.read_names, cap.joint = checked_reads(tracer, read_names, world), (cap_joint if not tracer.breaks else None)
    if not cap.breaks:
        unobserved(_finish, tracer, cap, result, sets, floats)  # (its reads are no calls a mode sees)
    if cap.breaks and cap.read_names is not None:  # (no replay sets the floats: their names guarded again)
        cap.read_names |= unguarded_names(floats, world.all_modules)
    cap.pieces = [g for g in tracer.pieces + [tracer.graph] if any(n.op == "call_op" for n in g.nodes)]
    if _has_loop_int(result):  # the caller gets plain ints, as a replay gives
        result = unflatten(cap.output, iter(flatten(result)))
    tracer.refs, tracer.held = {}, []  # their callbacks hold the tracer: no cycle left to collect
    return result, cap


def _finish(tracer, cap, result, sets, floats):
    """Adds the output node: the returned tensors, then the ``.grad`` tensors made in the call,
    then the tensors it set as module attributes (``sets``; ``floats``: :mod:`.attribute_sets`)."""
    outputs = []
    returned = flatten(result) + hidden_bases(flatten(result), tracer.made_here)  # (returned after the user's)
    for t in returned:  # without a recorded backward, a returned x.detach() is a Detach of x's node (aot.released)
        outputs.append(tracer.arg(t, None) if cap.joint is None else released(tracer, t, cap.joint[0]))
    cap.output_nodes, (cap.freed, cap.live) = list(outputs), node_positions(returned, tracer)
    for p in tracer.world.params:
        if not found_again(tracer.known, p, tracer.world):
            tracer.breaks.append(("a parameter's array was replaced (.data =)", "<end of function>"))
        grad = p.grad
        known = tracer.known.get(id(grad._data)) if grad is not None else None
        if known is not None and known[0][0] == "grad" and known[0][1] is p:
            continue  # the same gradient array, updated in place if at all
        if grad is None:
            if id(p) in tracer.grad_written or any(s[0] == "grad" and s[1] is p for s, _ in tracer.known.values()):
                cap.grad_sets.append((p, None))
            continue
        node = tracer.value.get(id(grad._data))
        if node is None or node.op == "placeholder":
            tracer.breaks.append(("a .grad was set to a tensor made outside the graph", "<end of function>"))
            break
        cap.grad_sets.append((p, len(outputs)))
        outputs.append(node)
    cap.input_grad_sets, cap.input_hooks = input_grad_sets(tracer, outputs), input_hooks(tracer)  # (x.grad, x.register_hook)
    cap.attr_sets, cap.float_sets = noted(sets, returned, len(outputs)), noted_floats(floats)
    outputs += [tracer.arg(t, None) if cap.joint is None else tracer.node(t) for t in extra(sets, returned)]
    for opt in tracer.world.optimizers:
        if any(isinstance(v, Tensor) and tracer.known.get(id(v._data), ((None,),))[0][0] != "state"
               for state in opt.state.values() for v in state.values()):
            tracer.breaks.append(("the optimizer's state was made in this call (the next call "
                                  "recompiles with it)", "<end of function>"))
            break
    cap.views = returned_views(tracer.graph, tracer.sources, tracer.world, returned, cap.output_nodes)
    if (why := aliased_results(returned, tracer.world, cap.views)) is not None:
        if tracer.fullgraph:
            raise Unsupported(f"graph break (fullgraph=True): {why}")
        tracer.breaks.append((why, "<end of function>"))
    if tracer.breaks:  # (cap.breaks: the same list)
        return
    laid = [layout_of(t._data) or strided_layout(t._data) for t in returned + extra(sets, returned)]
    cap.layouts = laid[:len(returned)] + grad_layouts(cap, tracer) + laid[len(returned):]
    tracer.graph.output(outputs)
