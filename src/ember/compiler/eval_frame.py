"""``ember.compile``: capture on the first call, replay while the guards hold, recompile when not.

Each compiled callable keeps a cache of entries (guards, runner). A call whose guards match an
entry replays its graph; otherwise the function runs once more eagerly while being recorded
(:func:`~.capture.capture`), up to ``recompile_limit`` entries, after which it runs eagerly with
one warning naming the failed guard. A recording that met a graph break makes an entry that
runs the function eagerly (the program stays correct); ``fullgraph=True`` raises instead.
"""
import collections
import functools
import os
import sys
import warnings
import weakref

import numpy as np

from .._tensor import Tensor
from ..nn.modules.module import Module
from .._ops import core as _core
from . import aot, replay
from .backends import OPTIONS, compile_graph
from .capture import Tracer, capture, unflatten
from .exc import InvalidBackend
from .guards import World, first_difference, holds, relevant, snapshot

__all__ = ["compile", "OptimizedModule", "reset", "disable", "set_stance", "is_compiling", "counters",
           "config", "MODES", "BACKENDS"]

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
BACKENDS = ("inductor", "eager", "aot_eager")
# Torch's inductor option names that ember's code generator reads (an option unknown to it is an
# error that lists these); the code generator may add its own through ``backends.OPTIONS``.
_OPTIONS = ("max_autotune", "max_autotune_gemm", "epilogue_fusion", "coordinate_descent_tuning",
            "freezing", "triton.cudagraphs", "trace.enabled", "trace.graph_diagram", "fx_graph_cache")
_MODE_OPTIONS = {"default": {}, "reduce-overhead": {"triton.cudagraphs": True},
                 "max-autotune": {"max_autotune": True, "triton.cudagraphs": True},
                 "max-autotune-no-cudagraphs": {"max_autotune": True}}
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")


class _Config:
    """``ember._dynamo.config``: ``recompile_limit`` (8, torch's default) entries per function."""
    recompile_limit = 8
    cache_size_limit = property(lambda self: self.recompile_limit)


config = _Config()
counters = collections.defaultdict(collections.Counter)  # torch._dynamo.utils.counters
_stance = ["default"]
_compiled = weakref.WeakSet()


def _log(kind, text):
    """Prints ``text`` to stderr when ``EMBER_LOGS`` names ``kind`` (like ``TORCH_LOGS``)."""
    if kind in os.environ.get("EMBER_LOGS", "").replace(" ", "").split(","):
        print(f"[ember.compile {kind}] {text}", file=sys.stderr)


def _fetcher(source):
    kind = source[0]
    if kind == "input":
        return lambda inputs, i=source[1]: inputs[i]
    if kind in ("param", "tensor"):
        return lambda inputs, t=source[1]: t
    if kind == "grad":
        return lambda inputs, p=source[1]: p.grad
    if kind == "state":
        return lambda inputs, opt=source[1], p=source[2], key=source[3]: opt.state[p][key]
    return lambda inputs, array=source[1]: Tensor._make(array.copy())


class _Entry:
    """One cached compilation: its guards and how to run a call that passes them."""

    def __init__(self, facts, cap, backend, options):
        self.facts, self.cap = facts, cap
        graph, sources = cap.graph, cap.sources
        self.tape = not cap.ran_backward and any(n.meta.get("requires_grad") for n in cap.output_nodes)
        self.joint = aot.split(graph, sources, *cap.joint) if self.tape and cap.joint else None
        self.uncut = self.tape and cap.joint is not None and self.joint is None  # runs eagerly
        if self.joint is not None:
            graph, sources = self.joint.forward, self.joint.forward_sources  # outputs, then saved
        self.fetch = [_fetcher(s) for s in sources]
        self.mutated = [graph.placeholders.index(p) for p, _ in graph.mutations]
        if self.joint is not None and backend != "eager":
            # forward and backward both compiled, joined by one autograd node
            compile_graph = replay.interpret if backend == "aot_eager" else lambda g: _codegen(g, options)
            self.run_forward, self.run_backward = compile_graph(graph), compile_graph(self.joint.backward)
            self.n_inputs = len(sources)
            return
        self.joint = None
        if backend == "eager" or self.tape:
            self.run, self.on_arrays = replay.dispatch(graph), False
        elif backend == "aot_eager":
            self.run, self.on_arrays = replay.interpret(graph), True
        else:
            self.run, self.on_arrays = _codegen(graph, options), True
        placeholders = set(graph.placeholders)
        self.passthrough = {i: graph.placeholders.index(n) for i, n in enumerate(graph.outputs)
                            if n in placeholders}

    def __call__(self, world, fn, args, kwargs):
        inputs = world.inputs
        if self.uncut:
            return fn(*args, **kwargs)
        tensors = [f(inputs) for f in self.fetch]
        if self.joint is not None:
            return unflatten(self.cap.output, iter(aot.CompiledGraph.apply(self, *tensors)))
        if self.on_arrays:
            results = self.run([t._data for t in tensors])
            for i in self.mutated:
                tensors[i]._version[0] += 1
            results = [tensors[self.passthrough[i]] if i in self.passthrough
                       else Tensor._make(a if type(a) is np.ndarray else np.asarray(a))
                       for i, a in enumerate(results)]
        else:
            results = self.run(tensors)
            if self.cap.ran_backward:
                results = [t if i in self.passthrough else t.detach() for i, t in enumerate(results)]
        for p, i in self.cap.grad_sets:
            p.grad = None if i is None else results[i]
        return unflatten(self.cap.output, iter(results))


def _codegen(graph, options):
    """The code generator's runner (``ember.compiler.backends.compile_graph``): C where a
    compiler exists, generated Python where none does."""
    return compile_graph(graph, options)


class _CompiledFunction:
    """What ``ember.compile(fn)`` returns: calls ``fn`` through the cache of captured graphs."""

    def __init__(self, fn, fullgraph, backend, options, recompile_limit):
        self._fn, self._fullgraph, self._backend, self._options = fn, fullgraph, backend, options
        self._recompile_limit = recompile_limit
        self._entries, self._warned, self._world = [], False, None
        functools.update_wrapper(self, fn)
        _compiled.add(self)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        fn = self._fn
        if _stance[0] == "force_eager" or is_compiling():
            return fn(*args, **kwargs)
        world = self._world = World(fn, args, kwargs, self._world)
        facts = snapshot(world, args, kwargs)
        for entry in reversed(self._entries):  # the newest is the likeliest
            if holds(entry.facts, facts):
                return entry(world, fn, args, kwargs)
        reason = first_difference(self._entries[-1].facts, facts) if self._entries else None
        if reason is not None:  # walk the modules afresh: the structure may have changed
            world = self._world = World(fn, args, kwargs)
            facts = snapshot(world, args, kwargs)
        if self._entries:
            _log("recompiles", f"recompiling {_name(fn)}: guard failed: {reason}")
            counters["recompiles"][_name(fn)] += 1
            if _stance[0] == "fail_on_recompile":
                raise RuntimeError(f"Detected recompile when torch.compile stance is "
                                   f"'fail_on_recompile'. {_name(fn)}: {reason}")
            limit = self._recompile_limit or config.recompile_limit
            if _stance[0] == "eager_on_recompile" or len(self._entries) >= limit:
                if not self._warned and _stance[0] != "eager_on_recompile":
                    self._warned = True
                    warnings.warn(f"ember.compile: {_name(fn)} hit config.recompile_limit ({limit}); "
                                  f"running it eagerly from now on. Last failed guard: {reason}")
                return fn(*args, **kwargs)
        result, cap = capture(fn, args, kwargs, world, self._fullgraph)
        if cap.breaks:
            reason, where = cap.breaks[0]
            counters["graph_break"][reason] += 1
            _log("graph", f"graph break in {_name(fn)}: {reason}\n  at {where}\n  (this function runs eagerly)")
        else:
            counters["stats"]["unique_graphs"] += 1
            _log("graph", f"captured graph of {_name(fn)}:\n{cap.graph.code}")
            _log("guards", f"guards of {_name(fn)}:\n" + "\n".join(f"  {n} == {v!r}"
                                                                   for n, v in relevant(facts, cap)))
        self._entries.append(_Entry(relevant(facts, cap), cap, self._backend, self._options)
                             if not cap.breaks else _Broken(facts, cap))
        return result


class _Broken:
    """An entry for a recording that met a graph break: calls that match run eagerly."""

    def __init__(self, facts, cap):
        self.facts, self.cap = facts, cap

    def __call__(self, world, fn, args, kwargs):
        return fn(*args, **kwargs)


def reset():
    """Forgets every compiled function's captured graphs and the counters (``torch.compiler.reset``)."""
    for f in list(_compiled):
        f._entries.clear()
        f._warned, f._world = False, None
    counters.clear()


def disable(fn=None, recursive=True, *, reason=None):
    """``fn`` never compiled (``torch.compiler.disable``): called inside a compiled function, it
    is a graph break (that function runs eagerly). Usable as a decorator, with or without arguments."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        for o in _core.OBSERVERS:
            if isinstance(o, Tracer):
                o.graph_break(f"call to {_name(fn)}, marked ember.compiler.disable"
                              + (f" ({reason})" if reason else ""))
        return fn(*args, **kwargs)
    return disabled


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """How compiled functions behave from now on (``torch.compiler.set_stance``): ``"default"``,
    ``"force_eager"`` (run eagerly), ``"eager_on_recompile"`` (run eagerly instead of
    recompiling), ``"fail_on_recompile"`` (RuntimeError instead of recompiling).

    Raises:
        RuntimeError: an unknown stance.
    """
    if stance not in _STANCES:
        raise RuntimeError(f"invalid stance {stance!r}, should be one of: {', '.join(_STANCES)}")
    _stance[0] = stance


def is_compiling():
    """True while a function is being captured (``torch.compiler.is_compiling``)."""
    return any(isinstance(o, Tracer) for o in _core.OBSERVERS)


def _name(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _resolve(backend, mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if backend is None:
        backend = "inductor"
    if callable(backend) and not isinstance(backend, str):
        raise NotImplementedError("ember.compile takes a backend by name: "
                                  f"{', '.join(BACKENDS)}; got the callable {backend!r}")
    if backend not in BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `ember._dynamo.list_backends()` "
                             "for available backends.")
    known = _known_options()
    for key in options or {}:
        if key not in known:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are {sorted(known)}")
    return backend, dict(_MODE_OPTIONS[mode or "default"], **(options or {}), mode=mode or "default")


def _known_options():
    return set(_OPTIONS) | set(OPTIONS)


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None,
            disable=False, recompile_limit=None, dynamic_shapes=None):
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
        dynamic, dynamic_shapes: accepted; each new input shape is a recompile.
        backend (str): ``"inductor"`` (default: ember's code generator), ``"aot_eager"`` (the
            captured graph run node by node) or ``"eager"`` (replayed through the dispatcher).
        mode (str): one of ``MODES``; ``options`` (dict): code generator options.
        disable (bool): return ``model`` unchanged.
        recompile_limit (int): entries per function before it runs eagerly (default
            ``ember._dynamo.config.recompile_limit``, 8).

    Raises:
        RuntimeError: both ``mode`` and ``options``; an unknown mode or option (the message
            lists the valid ones). ``ember._dynamo.exc.InvalidBackend``: an unknown backend.
    """
    if model is None:
        _resolve(backend, mode, options)
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable,
                                 recompile_limit=recompile_limit, dynamic_shapes=dynamic_shapes)
    backend, options = _resolve(backend, mode, options)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, _CompiledFunction(model.__call__, fullgraph, backend, options,
                                                        recompile_limit))
    if not callable(model):
        raise RuntimeError(f"ember.compile expects a callable or an nn.Module, got {type(model).__name__}")
    return _CompiledFunction(model, fullgraph, backend, options, recompile_limit)



class OptimizedModule(Module):
    """What ``ember.compile(module)`` returns (``torch._dynamo.OptimizedModule``): calls go
    through the compiled ``module.__call__``; the original is ``_orig_mod`` (so state_dict keys
    carry the ``_orig_mod.`` prefix, as torch's do) and its attributes read through."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled_call"] = compiled

    def __call__(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    forward = __call__

    def __getattr__(self, name):
        try:
            return Module.__getattr__(self, name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)
