"""``ember.compile``: capture on the first call, replay while the guards hold, recompile when not.

Each compiled callable reads a cache of entries (guards, runner), shared with the other calls
compiling the same function alike (:mod:`.shared_cache`). A call whose guards match an
entry replays its graph; otherwise the function runs once more eagerly while being recorded
(:func:`~.capture.capture`), up to ``recompile_limit`` entries, after which it runs eagerly with
one warning naming the failed guard. A recording that met graph breaks splits the function at
them (:mod:`.split`: captured pieces, each compiled with its own entries, and the statements
that broke run eagerly between them); where a split is refused, an entry runs the whole
function eagerly (the program stays correct). ``fullgraph=True`` raises instead.
"""
import functools
import operator
import sys
import warnings
import weakref

import numpy as np

from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.parameter import is_lazy
from .._ops import core as _core
from .._ops.args import caller_level
from . import aot, rebind, replay, shared_cache
from .backends import compile_graph, log_enabled
from .call_nodes import FreedOutputs, as_compiled
from .custom_backend import custom_runner, first_run, first_split_run, is_custom, state_before
from .capture import capture, input_names, unflatten
from .counting import count_frame, count_graph, counters
from .closure_ints import HOWS, derived_from, position_names, relaxed_cells
from .config_module import DynamoConfig
from .duck_sizes import name_dims
from .dynamic import capture_dynamic, marks as _marks, verify
from .dynamic_ints import ARG, float_capture, int_symbols, static_ints, traced_again
from .read_floats import Reads, lifted_capture, read_values
from .returned_floats import has_returned_floats, returned_floats
from .traced_floats import fill_floats, float_guards, float_inputs, float_positions
from .breaks import SPARSE, eager_argument as _eager_argument, sparse_argument as _sparse_argument, unobserved
from .exc import FailOnRecompileLimitHit, Unsupported
from ..fx.experimental import dynamic_spec as _dynamic_spec  # imports this package back: read late
from .guard_checks import argument_named
from .guards import World, bind, first_difference, holds, read_groups, snapshot, with_patterns
from .aliases import remake, without_views
from .arguments import Binder
from .attribute_sets import set_attributes
from .inner_views import Strided, for_backend, wrap
from .input_grads import set_grads
from .layouts import laid_out
from .markers import _name, _stance, disable, is_compiling, set_stance
from .optimized_module import OptimizedModule
from .options import BACKENDS, MODES, resolve as _resolve
from .recheck import rechecking
from .sources import escapes as _escapes, fetcher as _fetcher, relevant
from .split import split as _split, split_as_cached
from .symbolic import Expr

__all__ = ["compile", "OptimizedModule", "reset", "disable", "set_stance", "is_compiling", "counters",
           "config", "MODES", "BACKENDS"]


config = DynamoConfig()
_compiled = weakref.WeakSet()


def _log(kind, text):
    """Prints ``text`` to stderr when ``EMBER_LOGS`` or ``ember._logging.set_logs`` names ``kind``;
    ``text`` may be a function making it (a graph's code takes milliseconds to print)."""
    if log_enabled(kind):
        print(f"[ember.compile {kind}] {text() if callable(text) else text}", file=sys.stderr)


class _Entry:
    """One cached compilation: its guards and how to run a call that passes them. A dynamic
    graph's entry has ``ranges`` (its size symbols' ranges; None for a static graph); ``call``:
    the capturing call's ``(world, sizes)``: a callable backend's example inputs and names."""

    def __init__(self, facts, cap, backend, options, ranges=None, call=None):
        self.facts, self.cap, self.ranges = facts, cap, ranges
        # outputs that are views of an input are remade from it after each run (aliases.py)
        graph, sources, self.views = without_views(cap.graph, cap.views), cap.sources, cap.views
        remade = {v.position for v in cap.views}
        self.tape = (cap.joint is not None or not cap.ran_backward) and any(
            n.meta.get("requires_grad") for i, n in enumerate(cap.output_nodes) if i not in remade)
        self.layouts = for_backend([v for i, v in enumerate(cap.layouts) if i not in remade], backend)  # (eager's)
        self.wraps = backend == "aot_eager"  # its views of intermediates keep _base (inner_views.py)
        self.joint = aot.split(graph, sources, *cap.joint) if self.tape and cap.joint else None
        # runs eagerly: a joint graph not cut, or a graph replayed on tensors (no joint one, or the eager or a callable
        # backend) after a backward in it (its results detached), or whose write into an input requiring grad (an
        # optimizer's step before a forward) replay.dispatch cannot follow (cap.rewrote, unfollowed_writes) or a
        # callable backend writes after its graph (the forward would read the values, no gradient)
        on_tensors = self.joint is None or backend not in ("aot_eager", "inductor")
        self.uncut = self.tape and (cap.joint is not None and self.joint is None or on_tensors and (
            cap.ran_backward or cap.rewrote or replay.unfollowed_writes(graph)
            or is_custom(backend) and any(p.meta.get("requires_grad") for p, _ in graph.mutations)))
        self.viewed = [v.placeholder if v.base is not None or not self.joint else  # (the view's tensor in the run)
                       sum(s[0] != "grad_output" for s in sources[:v.placeholder]) for v in self.views]  # (no grad_output)
        if self.joint is not None:
            graph, sources = self.joint.forward, self.joint.forward_sources  # outputs, then saved
        shared = [s[0] == "const" and self.joint is None and not _escapes(graph, p)
                  for s, p in zip(sources, graph.placeholders)]
        self.sources, self.fetch = sources, [_fetcher(s, share) for s, share in zip(sources, shared)]
        # a parameter, a tensor read from the closure or globals, a shared constant: the same
        # object on every call (the guards check its identity), fetched once here
        fixed = [s[0] in ("param", "tensor") or share for s, share in zip(sources, shared)]
        self.fixed = [f(None, None) if same else None for f, same in zip(self.fetch, fixed)]
        self.varying = [(i, f) for i, (f, same) in enumerate(zip(self.fetch, fixed)) if not same]
        self.floats, self.marked = float_inputs(sources), has_returned_floats(cap.output)
        self.reads = getattr(cap, "float_reads", ())  # (the floats it reads: read_floats)
        self.extras = getattr(cap, "extras", None)  # (the ints after the arguments it knew: closure_ints)
        self.mutated = [graph.placeholders.index(p) for p, _ in graph.mutations]
        if self.joint is not None and backend in ("aot_eager", "inductor"):
            # forward and backward both compiled, joined by one autograd node
            compile_graph = replay.interpret if backend == "aot_eager" else lambda g: _codegen(g, options)
            self.run_forward, self.run_backward = compile_graph(graph), compile_graph(self.joint.backward)
            self.n_inputs, self.compile_graph, self.pruned = len(sources), compile_graph, {}
            self.freed = FreedOutputs(cap, remade, self.fixed, {})  # (a loss beside FGSM's x_adv)
            return
        n_outputs, self.joint = self.joint and self.joint.n_outputs, None  # (the forward's first outputs: the user's)
        if is_custom(backend):  # the user's compiled callable, on tensors (autograd through it)
            self.run, self.on_arrays = custom_runner(backend, graph, self.fetch, call, sources, n_outputs), False
        elif backend == "eager" or self.tape:
            self.run, self.on_arrays = replay.dispatch(graph), False
        elif backend == "aot_eager":
            self.run, self.on_arrays = replay.interpret(graph), True
        else:
            self.run, self.on_arrays = _codegen(graph, options), True
        placeholders = set(graph.placeholders)
        self.passthrough = {i: graph.placeholders.index(n) for i, n in enumerate(graph.outputs)
                            if n in placeholders}  # (a constant returned: a copy laid out as eager's; an input: a view)
        self.layouts = [None if i in self.passthrough and sources[self.passthrough[i]][0] != "const" else v
                        for i, v in enumerate(self.layouts)]
        self.freed = FreedOutputs(cap, remade, self.fixed, self.passthrough)  # (a loss after backward())

    def backward_without(self, missing, grads, shapes):
        """``(run, arrays)``: the backward graph and its inputs after the saved values, for a
        call whose output gradients ``grads`` (of ``shapes``) are None at ``missing``: the graph
        without their branch (:func:`aot.without_gradients`, compiled once per such set), or where
        that cannot be built, the whole backward with zeros for them."""
        if missing not in self.pruned:
            n_saved = len(self.joint.backward.placeholders) - len(grads)
            pruned = aot.without_gradients(self.joint.backward, n_saved, missing)
            self.pruned[missing] = pruned and (self.compile_graph(pruned[0]), pruned[1])
        present = [g._data for g in grads if g is not None]
        if self.pruned[missing]:
            run, metas = self.pruned[missing]
            return run, present + [np.zeros(m["shape"], m["dtype"].np) for m in metas]
        dtypes = [p.meta["dtype"].np for p in self.joint.backward.placeholders[-len(grads):]]
        return self.run_backward, [np.zeros(shape, d) if g is None else g._data
                                   for g, shape, d in zip(grads, shapes, dtypes)]

    def _returned(self, tensors, i):
        """Output ``i``, a placeholder: the input, or a constant's copy laid out as eager's (channels_last)."""
        t = tensors[self.passthrough[i]]
        return t if self.layouts[i] is None else Tensor._make(laid_out(t._data, self.layouts[i]))

    @staticmethod
    def invoke(run, values, sizes):
        """``run(values)``, or ``run(values, sizes)`` for a graph with size symbols."""
        return run(values) if sizes is None else run(values, sizes)

    def __call__(self, inputs, fn, args, kwargs, sizes=None):
        """Runs a call whose guards hold; ``inputs``: its tensors (``World.inputs``)."""
        if self.uncut:
            return fn(*args, **kwargs)
        reads = unobserved(read_values, self.reads, fn, args, kwargs, self.extras) if self.reads or self.floats or \
            self.marked else ()
        if reads is None:  # (a path of its reads missing in this call: eagerly)
            return fn(*args, **kwargs)
        # (the graph holds what overrides and modes did in the recording: its replay hands them nothing)
        return unobserved(self._replay, inputs, fn, args, kwargs, sizes, reads)

    def _replay(self, inputs, fn, args, kwargs, sizes, reads):
        self.cap.require_grads(inputs)  # (``x.requires_grad_()`` before the call read x)
        tensors = self.fixed.copy()
        for i, f in self.varying:
            tensors[i] = f(inputs, sizes)
        if self.floats:
            fill_floats(tensors, self.floats, args, kwargs, reads)
        if self.joint is not None:  # (then the .grad sets too: zero_grad() before the forward)
            results = list(aot.apply_compiled(self, sizes, tensors))
            self.freed.give(results)
        elif self.on_arrays:
            arrays = list(map(_DATA, tensors))
            # the writes counted before the run, while the tensors are in the cache (the step's
            # data evicts them), and taken back if it raises
            for i in self.mutated:
                tensors[i]._versions[0] += 1
            try:
                results = self.run(arrays) if sizes is None else self.run(arrays, sizes)
            except BaseException:
                for i in self.mutated:
                    tensors[i]._versions[0] -= 1
                raise
            layouts = self.layouts
            results = [self._returned(tensors, i) if i in self.passthrough
                       else wrap(a, layouts[i], arrays) if self.wraps and type(layouts[i]) is Strided
                       else Tensor._make(laid_out(a if type(a) is np.ndarray else np.asarray(a), layouts[i]))
                       for i, a in enumerate(results)]
            self.freed.give(results)
        else:
            results = self.freed.detached(self.invoke(self.run, tensors, sizes), tensors, self.passthrough)
        if self.views:
            results = remake(self.views, self.viewed, results, tensors, sizes)
        set_grads(self.cap, inputs, results)
        self.cap.replay_writes(fn, args, kwargs, reads)  # (``g["lr"] = lr``, ``cfg["lr"] = cfg["lr"] * 0.5``)
        set_attributes(self.cap.attr_sets, results)
        return returned_floats(unflatten(self.cap.output, iter(results), sizes), self.marked, args, kwargs, reads)


def _codegen(graph, options):
    """The code generator's runner (``ember.compiler.backends.compile_graph``): C where a compiler exists, generated
    Python where none does. Counts the disk cache's answer as torch (``counters["inductor"]["fxgraph_cache_hit"]``)."""
    fn = compile_graph(graph, options)
    if hasattr(fn, "graph_cache"):
        counters["inductor"][f"fxgraph_cache_{fn.graph_cache}"] += 1
    counters["complex"].update(getattr(fn, "complex_counts", {}))
    return fn


_DATA = operator.attrgetter("_data")


class _CompiledFunction:
    """What ``ember.compile(fn)`` returns: calls ``fn`` through the cache of captured graphs."""

    _entries, _warned, _static_ints = map(shared_cache.shared, ("entries", "warned", "static_ints"))

    @property
    def _reads(self):
        """The floats read (:class:`~.read_floats.Reads`), shared by the functions of the code (its family)."""
        family = self._cache.family
        family.reads = family.reads or Reads()
        return family.reads

    def __init__(self, fn, fullgraph, backend, options, recompile_limit, dynamic=None, spec=None,
                 signature_of=None, name=None, isolate=False):
        self._label = name or _name(fn)  # in the logs, the warning and counters["recompiles"]
        self._fn, self._fullgraph, self._backend, self._options = fn, fullgraph, backend, options
        self._recompile_limit, self._dynamic, self._spec = recompile_limit, dynamic, spec
        self._signature_of = signature_of or fn  # whose parameters the spec names (a module's forward)
        self._binder = Binder(self._signature_of)  # (calls bound to them first, as torch's frames)
        if spec is not None:
            spec.check_signature(self._signature_of)
        settings = (backend, tuple(sorted(options.items())), dynamic, recompile_limit)  # (fullgraph shares)
        self._isolate, self._cache = isolate, shared_cache.cache_for(fn, settings, isolate or spec is not None)
        self._world, self._waited = None, False
        self._last = None, None  # (facts, entry) of the last call that replayed a static graph
        self._recheck, self._missed = None, 0  # that call's facts, to re-read flat (recheck.rechecking)
        self._recheck_for = self._other = None  # (the _last it was made for; a graph's used in turn: (recheck, _last))
        self._split = None  # once split at its graph breaks: the callable running the pieces
        self._gave_up = False  # (two recordings broke alike, unsplittable: eagerly from then on, _broke)
        self._skipped = False  # (gave up with no graph of its family to run: no guards built, as torch skips a frame)
        self._plan = None  # (that callable or None, its split.Plan or why it was refused)
        functools.update_wrapper(self, fn)
        _compiled.add(self)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __reduce__(self):
        # pickled (``ember.save`` of a compiled module) as its settings: the graphs, built for
        # this process, are captured again on the first call after loading, as torch's are
        return _CompiledFunction, (self._fn, self._fullgraph, self._backend, self._options, self._recompile_limit,
                                   self._dynamic, self._spec, self._signature_of, self._label, self._isolate)

    def __call__(self, *args, **kwargs):
        fn, (args, kwargs) = self._fn, self._binder.bound(args, kwargs)
        if _stance[0] == "force_eager" or _core.OBSERVERS and is_compiling() or \
                _eager_argument(args, kwargs, self._fullgraph):
            if self._fullgraph and _stance[0] != "force_eager" and _sparse_argument(args, kwargs):
                raise Unsupported(f"graph break (fullgraph=True): {SPARSE}")  # (torch's dynamo: the same)
            return fn(*args, **kwargs)
        if self._skipped:  # (the LBFGS closure of the style-transfer tutorial: run[0] += 1 each call)
            return fn(*args, **kwargs)
        if self._split is None and self._plan is None and self._cache.breaks is not None:
            self._split, self._plan = split_as_cached(self, lambda text: _log("graph", text))
        if self._split is not None:  # the pieces guard, capture and replay themselves
            return self._split(*args, **kwargs)
        recheck = self._recheck
        if recheck is not None and not kwargs and unobserved(recheck.holds, args):
            recheck.held = True
            return self._last[1](recheck.inputs(args), fn, args, kwargs)  # a training loop: the last call's world again
        # two graphs in turn (train, eval): the other graph's recheck
        if (other := self._other) is not None and not kwargs and unobserved(other[0].holds, args):
            self._other, (self._recheck, self._last) = recheck and (recheck, self._last), other
            self._recheck_for, other[0].held = self._last, True
            return self._last[1](other[0].inputs(args), fn, args, kwargs)
        held = () if self._spec is None else self._spec.held(self._signature_of, args, kwargs)
        world = self._world = World(fn, args, kwargs, self._world, held)
        declared = None if self._spec is None else self._spec.bind(self._signature_of, args, kwargs, world.inputs)
        try:
            facts = unobserved(snapshot, world, args, kwargs)
        except ValueError:  # a lazy module's parameters (no shape yet): made by an eager call, as torch's
            if not any(map(is_lazy, world.params)):
                raise
            return fn(*args, **kwargs)
        if facts == self._last[0]:  # the same world as the last call's, which the recheck did not show
            rechecking(self, world, args, kwargs)
            return self._last[1](world.inputs, fn, args, kwargs)
        # the newest is the likeliest; a graph for these very sizes (C) before a dynamic one
        # (generated Python): a loop whose last batch is short keeps its C graph for the others
        for entry in reversed(self._entries):
            if entry.ranges is None and holds(entry.facts, facts):
                self._last = facts, entry
                rechecking(self, world, args, kwargs)
                return entry(world.inputs, fn, args, kwargs)
        for entry in reversed(self._entries):
            if entry.ranges is not None:
                sizes = bind(entry.facts, facts, entry.ranges)
                if sizes is None:
                    continue
                if entry.shape.ran_at(sizes):  # the next call with the same world skips the guards
                    self._last = facts, lambda *call, entry=entry, sizes=sizes: entry(*call, sizes)
                    rechecking(self, world, args, kwargs)
                    return entry(world.inputs, fn, args, kwargs, sizes)
                # the first call at new sizes runs eagerly, recorded, and must be the fitted graph
                before = state_before(self._backend, world)  # (a callable backend's: first_run)
                result, cap = unobserved(traced_again, lambda a, k: capture(fn, a, k, world, self._fullgraph), args, kwargs, world, entry.floats, fn, entry.reads)
                reason = verify(entry.shape, sizes, cap)
                limit = self._recompile_limit or config.recompile_limit
                if reason is not None and self._cache.family.captured() < limit:
                    _log("recompiles", f"recompiling {self._label}: the dynamic graph does not hold at "
                                       f"these sizes: {reason}")
                    counters["recompiles"][self._label] += 1
                    count_graph(cap)
                    self._entries.append(_Broken(facts, cap) if cap.breaks else
                                         _Entry(relevant(facts, cap), cap, self._backend, self._options,
                                                call=(world, None)))
                call = world.inputs, fn, args, kwargs, sizes
                return result if reason else self._first_nodes(first_run(entry, cap, result, before, call), cap, world)
        family = self._cache.family
        last = (self._entries or family.entries() or [None])[-1]
        reason = first_difference(last.facts, facts, last.ranges) if last else None
        if reason is not None and reason.startswith(("input ", "argument ")):  # (torch's reasons name the argument)
            reason = argument_named(reason, input_names(fn, args, kwargs, access=True), position_names(fn, args, kwargs))
        if reason is not None:  # walk the modules afresh: the structure may have changed
            world = self._world = World(fn, args, kwargs, held=held)
            facts = unobserved(snapshot, world, args, kwargs)
        moved, alike = rebind.find(self._cache, world, facts)
        limit = self._recompile_limit or config.recompile_limit
        if moved is not None:  # a graph of its code captured for other objects, run on these
            self._last = facts, rebind.keep(self._entries, moved, limit)
            rechecking(self, world, args, kwargs)
            return moved(world.inputs, fn, args, kwargs)
        if family.captured() and not alike:
            if self._warned or self._gave_up:  # past the limit: eagerly, neither logged nor counted (no recompile)
                return fn(*args, **kwargs)
            if _stance[0] == "fail_on_recompile":
                raise RuntimeError(f"Detected recompile when torch.compile stance is "
                                   f"'fail_on_recompile'. {self._label}: {reason}")
            if _stance[0] == "eager_on_recompile" or family.captured() >= limit:
                if (self._fullgraph or config.fail_on_recompile_limit_hit) and _stance[0] != "eager_on_recompile":
                    raise FailOnRecompileLimitHit(f"{self._label} hit config.recompile_limit ({limit}); last "
                                                  f"failed guard: {reason}. Hard failure due to " +
                                                  ("fail_on_recompile_limit_hit" if config.fail_on_recompile_limit_hit else "fullgraph=True"))
                if _stance[0] != "eager_on_recompile":
                    self._warned = True
                    warnings.warn(f"ember.compile: {self._label} hit config.recompile_limit ({limit}); "
                                  f"running it eagerly from now on. Last failed guard: {reason}",
                                  stacklevel=caller_level())
                return fn(*args, **kwargs)
        if not self._entries and not self._waited and unobserved(_makes_state, world):
            # a recording would end in a graph break (the optimizer's state made in the call):
            # this call runs eagerly, unrecorded, and the next one captures (and is the recompile)
            self._waited = True
            return self._first_nodes(fn(*args, **kwargs), None, world)
        if family.captured() and not alike:
            _log("recompiles", f"recompiling {self._label}: guard failed: {reason}")
            counters["recompiles"][self._label] += 1
        dims, ranges, floats, separate = unobserved(self._dynamic_dims, world, facts, declared)
        ints = any(k[0] == ARG for k in dims)  # (``lr * (it + 1)``: the float arguments beside traced ints traced too)
        if ints:
            floats = sorted({*floats, *(k for k, a in enumerate(world.arguments) if type(a) is float and k not in self._static_ints)})
        names = input_names(fn, args, kwargs) + [h[0] for h in held] if dims else None
        record = (lambda a, k: capture_dynamic(fn, a, k, world, self._fullgraph, dims, ranges, names, lambda text: _log(
            "dynamic", text), separate=separate)) if dims else lambda a, k: (*capture(fn, a, k, world, self._fullgraph), None, None)
        before = state_before(self._backend, world)  # (a callable backend's callable runs at this call: first_run)
        result, cap, shape, static, symbols, facts = unobserved(lifted_capture,  # (fn observed: capture.py)
            lambda at, paths: float_capture(record, args, kwargs, world, floats + at, fn, paths), self._reads, fn, args,
            kwargs, facts, ints or bool(floats), lambda: snapshot(World(fn, args, kwargs, held=held), args, kwargs))
        facts = read_groups(float_guards(facts, symbols), world.optimizers)  # (a float Python used keeps its guard)
        if shape is not None:  # (a closure cell's int taken as a symbol: any int there)
            facts = relaxed_cells(facts, world, [k for k, e in shape.ints.items() if isinstance(e, Expr)],
                                  lambda: snapshot(World(fn, args, kwargs, held=held), args, kwargs))
        # (an int specialised, not probed again at each new value)
        # (``k == 3`` True pins its int to one graph, not for good: dynamic.capture_dynamic's ``pinned``)
        self._static_ints.update(set(static_ints(dims, shape, world.positions)) - getattr(cap, "pinned", set()),
                                 set(floats) - set(symbols) - derived_from(fn))  # (``round(lr)`` a size: traced again)
        if static is not None:  # the dynamic graph leaves this call's sizes out: a graph for them too
            count_graph(static)
            self._entries.append(_Entry(relevant(facts, static), static, self._backend, self._options,
                                        call=(world, None)))
        if cap.breaks:
            return self._broke(facts, cap, result, (before, args, kwargs))
        count_graph(cap)
        _log("graph", lambda: f"captured graph of {self._label}:\n{cap.graph.code}")
        _log("guards", lambda: f"guards of {self._label}:\n" + "\n".join(f"  {n} == {v!r}"
                                                                       for n, v in relevant(facts, cap)))
        if shape is None:
            sizes = None
            entry = _Entry(relevant(facts, cap), cap, self._backend, self._options, call=(world, None))
            self._entries.append(rebind.remember(entry, world, counted=not alike))
        else:
            guarded = with_patterns(relevant(facts, cap), shape)
            sizes = bind(guarded, facts, shape.ranges)
            entry = _Entry(guarded, cap, self._backend, self._options, shape.ranges, (world, sizes))
            self._entries.append(entry)
            entry.shape = shape
        call = world.inputs, fn, args, kwargs, sizes
        return result if static is not None else self._first_nodes(first_run(entry, cap, result, before, call), cap, world)

    def _first_nodes(self, result, cap, world):
        """``result`` of a call that ran the function eagerly before any replay (unrecorded: ``cap``
        None; or recording ``cap``), given the nodes a replay gives the tensors whose history its backward
        freed and those it retained (:func:`.call_nodes.as_compiled`; the eager backend's are eager's)."""
        if self._backend not in ("aot_eager", "inductor") or cap is not None and not cap.ran_backward:
            return result
        return unobserved(as_compiled, result, cap and cap.freed, cap.live if cap else (), world.params)

    def _broke(self, facts, cap, result, rerun):
        """Returns ``result`` of a recording that met graph breaks, having split the function
        at them (:func:`.split.split`; a callable backend's pieces run, ``rerun``: :func:`first_split_run`'s
        ``(before, args, kwargs)``) or, where that is refused, added an entry running it eagerly."""
        self._split, plan = self._plan = _split(self, cap, lambda text: _log("graph", text))
        breaks = plan.breaks if self._split else cap.breaks[:1]
        for reason, _ in breaks:
            counters["graph_break"][reason] += 1
        text = "\n".join(f"graph break in {self._label}: {r}\n  at {w}" for r, w in breaks)
        _log("graph_breaks", text)
        for line in (plan.lines if self._split else ()):  # (its pieces count their frames)
            counters["resumes"][f"torch_dynamo_resume_in_{plan.func.__name__}_at_{line}"] += 1
        if self._split is None:
            count_frame()
            # a second recording breaking where an earlier one did, unsplittable too: recording it
            # again at each new guard only costs (torch's dynamo skips a frame it cannot compile)
            self._gave_up = any(isinstance(e, _Broken) and e.cap.breaks[:1] == cap.breaks[:1] for e in self._entries)
            self._entries.append(_Broken(facts, cap))
            self._skipped = self._gave_up and all(isinstance(e, _Broken) for e in self._cache.family.entries())
            _log("graph", f"{text}\n  (this function runs eagerly{' from now on' if self._gave_up else ''}: "
                          f"no split, {plan})")
        else:
            lines = ", ".join(map(str, sorted(set(plan.lines))))
            _log("graph", f"{text}\nsplit {self._label} at line {lines}: {plan.describe()}")
            return first_split_run(self._split, cap, result, *rerun)
        return result

    def _dynamic_dims(self, world, facts, declared):
        """The dimensions and int arguments to capture as symbols, ``({(input, dim) or (ARG, position):
        Expr}, {symbol: (lo, hi)})``: declared by a spec; else marked (``mark_dynamic``), all (``dynamic=True``)
        or, with ``None``, those changed since the last graph (torch's automatic dynamic). Sizes 0 and 1 stay static.
        Third, the positions of the float arguments to trace (:mod:`.traced_floats`), chosen alike;
        fourth, the symbols that are not duck sized (:mod:`.duck_sizes`)."""
        if self._dynamic is False:
            return {}, {}, [], set()
        before = self._dynamic is True or self._entries and config.automatic_dynamic_shapes and self._entries[-1].facts
        floats = float_positions(facts, before, self._static_ints, world.positions)
        if declared is not None:
            return declared[0], declared[1], floats, set()
        inputs = world.inputs
        wanted, separate = {}, set()  # (input, dim) -> (lo, hi); those that get a symbol of their own
        for i, t in enumerate(inputs):
            for d, bounds in _marks(t, "dynamic").items():
                wanted[(i, d)] = bounds
                separate.add((i, d))
            if self._dynamic is True:
                for d in range(t.dim()):
                    wanted.setdefault((i, d), (2, None))
        if self._entries and config.automatic_dynamic_shapes:
            before = dict(self._entries[-1].facts)
            for i, t in enumerate(inputs):
                old = before.get(f"input {i} (shape, dtype, requires_grad)")
                if old is not None and len(old[0]) == t.dim():
                    for d, (was, now) in enumerate(zip(old[0], t.shape)):
                        if not isinstance(was, int) or was != now:
                            wanted.setdefault((i, d), (2, None))
                        if isinstance(was, int) and was != now or self._dynamic is not True:
                            separate.add((i, d))
        static = {(i, d) for i, t in enumerate(inputs) for d in _marks(t, "static")}
        dims, ranges, separate = name_dims(inputs, wanted, separate, static,
                                           *int_symbols(facts, before, self._static_ints, world.positions,
                                                       len(world.arguments)))
        return dims, ranges, floats, separate


def _makes_state(world):
    """Whether an optimizer the call reaches would make its state in a step (Adam's moments,
    SGD's momentum buffer): it has none yet for a parameter that requires grad."""
    for opt in world.optimizers:
        stateless = ((p, group) for group in opt.param_groups for p in group["params"]
                     if p.requires_grad and not opt.state.get(p))
        first = next(stateless, None)
        if first is not None and opt._init_state(*first):
            return True
    return False


class _Broken:
    """An entry for a recording that met a graph break: calls that match run eagerly."""

    ranges = None

    def __init__(self, facts, cap):
        self.facts, self.cap = facts, cap

    def __call__(self, inputs, fn, args, kwargs):
        return fn(*args, **kwargs)


def reset():
    """Forgets every compiled function's captured graphs and the counters (``torch.compiler.reset``)."""
    for f in list(_compiled):
        f._cache.clear()
        f._world, f._last, f._waited, f._gave_up, f._skipped = None, (None, None), False, False, False
        f._recheck, f._missed, f._split, f._plan, f._recheck_for, f._other = None, 0, None, None, None, None
    shared_cache.clear()
    HOWS.clear()  # (the derived ints found: closure_ints.py)
    counters.clear()


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None, name=None,
            disable=False, recompile_limit=None, isolate_recompiles=False, shapes_spec=None):
    """Optimizes ``model`` (a function or an ``nn.Module``) by capturing and compiling what it
    does (``torch.compile``, https://pytorch.org/docs/stable/generated/torch.compile.html).

    The first call runs ``model`` eagerly while recording every op it dispatches (forward, the
    ``loss.backward()`` it runs, optimizer updates) into one graph; later calls whose guards
    hold (input shapes, dtypes, ``requires_grad``, grad mode, train/eval, parameter identity)
    run the compiled graph. Used as ``ember.compile(fn)`` or as a decorator, with or without
    arguments.

    Args:
        model: the function or module; None gives a decorator.
        fullgraph (bool): raise ``ember._dynamo.exc.Unsupported`` at a graph break (``.item()``,
            ``bool(tensor)``, ``.numpy()``, printing, random draws) instead of running eagerly.
        dynamic (bool or None): ``None`` (default): static graphs first; when an input's size
            changes, the next graph treats the sizes that changed as symbols (one graph for
            all of them). ``True``: every input dimension of size >= 2 is a symbol from the
            first call. ``False``: a graph per shape. ``ember._dynamo.mark_dynamic`` and
            ``mark_static`` mark single dimensions. See :mod:`ember.compiler.dynamic`.
        shapes_spec: a ``ShapesSpec`` (or a dict / ``ParamsSpec``) of
            ``ember.fx.experimental.dynamic_spec``, like the ``@dynamic_spec`` decorator.
        backend (str or callable): ``"inductor"`` (default: ember's code generator), ``"aot_eager"``
            (the captured graph run node by node), ``"eager"`` (replayed through the dispatcher)
            or ``backend(gm, example_inputs) -> callable`` (:mod:`~ember.compiler.custom_backend`).
        mode (str): one of ``MODES``; ``options`` (dict): code generator options.
        name (str or None): the compiled region's name in ember's logs (``EMBER_LOGS``), its
            recompile-limit warning and ``counters["recompiles"]`` (default: the function's).
        disable (bool): return ``model`` unchanged.
        recompile_limit (int): graphs per code object before it runs eagerly (default
            ``ember._dynamo.config.recompile_limit``, 8); with ``fullgraph=True`` one more
            recompile raises ``ember._dynamo.exc.FailOnRecompileLimitHit`` instead.
        isolate_recompiles (bool): ``False`` (default): the calls compiling the same function
            or module with the same settings share their graphs, as do the closures of one
            code and the modules of one class, and count ``recompile_limit`` together (see
            :mod:`ember.compiler.shared_cache`); ``True``: this call keeps its own.

    Raises:
        RuntimeError: both ``mode`` and ``options``; an unknown mode or option (the message
            lists the valid ones), an option's value of another type than torch's (bool).
            ``ember._dynamo.exc.InvalidBackend``: an unknown backend. AssertionError: a
            ``model`` that is not callable (torch's).
        ValueError: both ``dynamic`` and ``shapes_spec``; both ``@dynamic_spec`` and
            ``shapes_spec=``; a spec naming a parameter
            the function lacks. At a call, RuntimeError: a declared size outside its range or
            a false assumption. An ``EMBER_LOGS`` naming no log ``TORCH_LOGS`` has (torch's message).
    """
    log_enabled("graph")  # (an unknown EMBER_LOGS name raises here, as torch's TORCH_LOGS at import)
    if model is None:
        _resolve(backend, mode, options)
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, name=name, disable=disable, recompile_limit=recompile_limit,
                                 isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
    backend, options = _resolve(backend, mode, options)
    if disable:
        return model
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if dynamic is not None and shapes_spec is not None:
        raise ValueError("`dynamic` and `shapes_spec` cannot both be set. `shapes_spec` controls dynamic behavior.")
    spec = _dynamic_spec.resolve_dynamic_shapes(model, shapes_spec)
    if isinstance(model, Module):
        return OptimizedModule(model, _CompiledFunction(model.__call__, fullgraph, backend, options,
                                                        recompile_limit, dynamic, spec, model.forward, name,
                                                        isolate_recompiles))
    return _CompiledFunction(model, fullgraph, backend, options, recompile_limit, dynamic, spec, name=name,
                             isolate=isolate_recompiles)



def compile_forward(module, *args, **kwargs):
    """``module.compile(...)`` (torch's ``nn.Module.compile``): ``module.forward`` replaced by
    its compiled self. One whose ``forward`` is ``ember.nn``'s own (``nn.Linear(4, 4).compile()``,
    an ``nn.Sequential``) runs it eagerly, its submodules compiled instead, as torch's dynamo
    skips ``torch.nn``'s files and compiles the user modules called from them."""
    if type(module).forward.__module__.startswith("ember.nn."):
        for child in module.children():
            compile_forward(child, *args, **kwargs)
    else:
        module.forward = compile(module.forward, *args, **kwargs)
