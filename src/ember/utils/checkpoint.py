"""Activation checkpointing (``torch.utils.checkpoint``): keep a segment's inputs instead of its
activations, and recompute the segment during backward.

Source: https://pytorch.org/docs/stable/checkpoint.html
"""
import contextlib
import warnings
import weakref

from .._ops import core
from .._random import get_rng_state, set_rng_state
from .._tensor import Tensor
from ..autograd.engine import _is_checkpoint_valid, recompute_grad
from ..autograd.function import Function
from ..autograd.grad_mode import STATE, enable_grad, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "check_backward_validity", "detach_variable",
           "noop_context_fn", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled"]

_TENSOR = object()  # marks where a tensor argument goes back in the recomputation's call


class CheckpointError(RuntimeError):
    """``torch.utils.checkpoint.CheckpointError``: a recomputation that does not match."""


def noop_context_fn():
    """The default ``context_fn``: two contexts that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """A context for torch's stopping of a recomputation once the saved tensors it needs are
    made: ember recomputes the whole segment either way (same gradients)."""
    yield


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """A context for torch's recomputation traces (``debug=True``): accepted; ember prints none."""
    yield


def detach_variable(inputs):
    """``inputs`` (a tuple) with each tensor detached, keeping its ``requires_grad``; other items
    as they are. RuntimeError for anything but a tuple (torch's message)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    return tuple(x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x for x in inputs)


def check_backward_validity(inputs):
    """Warns (UserWarning, torch's) when no tensor among ``inputs`` requires grad."""
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def checkpoint(function=None, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    """Return ``function(*args, **kwargs)`` without keeping its intermediate tensors for
    backward; backward runs ``function`` again (with the RNG state of the first run when
    ``preserve_rng_state``) and differentiates that, so gradients equal the unchecked ones
    while peak memory drops by the segment's activations.

    Gradients reach ``args`` and every tensor requiring grad that ``function`` reads (module
    parameters, closures), through ``backward()`` and ``autograd.grad`` alike. ``function``
    runs twice, so its Python side effects happen twice.

    Called without ``function`` (``@checkpoint(use_reentrant=False)``), returns a decorator that
    checkpoints every call of the decorated function (PyTorch 2.14's form).

    Args:
        function: the segment, a callable returning a tensor or a tuple of tensors.
        args, kwargs: its inputs.
        use_reentrant: True or False (both run the recomputation above); None warns, as torch
            asks for it explicitly.
        preserve_rng_state: restore the RNG state before recomputing, so dropout draws match.
        context_fn: ``() -> (forward context, recompute context)``, entered around the first run
            and around the recomputation (``use_reentrant=False`` only, as torch).
        determinism_check: ``"default"`` (``use_reentrant=False``): the recomputation must save
            as many tensors, of the same shapes, dtypes and devices, as the first run's nodes
            would have, in order, else CheckpointError naming the positions; or ``"none"``.
        debug, early_stop: accepted for torch's signature (ember recomputes the whole segment).

    With ``use_reentrant=True``, as torch: no tensor argument requiring grad warns and gives an
    output without history (closed-over parameters get no gradient), and ``kwargs`` are refused.

    Tensors made inside the segment from no tensor that requires grad (``ones(3) * 2``) do not
    require grad, as in torch.

    Raises:
        CheckpointError: (during backward) the recomputation fails the determinism check.
        ValueError: ``determinism_check`` is neither ``"default"`` nor ``"none"`` (with
            ``use_reentrant=False``), or ``kwargs``, a ``context_fn`` or ``debug`` with
            ``use_reentrant=True``.
    """
    if use_reentrant is None:
        warnings.warn("ember.utils.checkpoint: the use_reentrant parameter should be passed explicitly; "
                      "use_reentrant=False is recommended.", stacklevel=2)
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and (context_fn is not noop_context_fn or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if not use_reentrant and determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    options = dict(use_reentrant=use_reentrant, context_fn=context_fn, preserve_rng_state=preserve_rng_state,
                   determinism_check=determinism_check, debug=debug, early_stop=early_stop)
    if function is None:
        def decorate(fn):
            def checkpointed(*a, **kw):
                return checkpoint(fn, *a, **options, **kw)
            checkpointed.__wrapped__ = fn
            checkpointed.__name__, checkpointed.__doc__ = fn.__name__, fn.__doc__
            return checkpointed
        return decorate
    forward_context, recompute_context = context_fn()
    if use_reentrant:  # torch's reentrant form is a Function of the tensor arguments alone
        check_backward_validity(args)
    if not STATE.enabled:
        with forward_context:
            return function(*args, **kwargs)
    if use_reentrant and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        with no_grad():
            return function(*args)
    rng_state = get_rng_state() if preserve_rng_state else None
    reads = _ReadTensors(args)
    core.OBSERVERS.append(reads)
    try:
        with no_grad(), forward_context:
            out = function(*args, **kwargs)
    finally:
        core.OBSERVERS.remove(reads)
    tensors = [a for a in args if isinstance(a, Tensor)]
    captured = [t for t in reads.tensors if not any(t is a for a in tensors)]
    if not any(t.requires_grad for t in tensors + captured):
        return out
    single = isinstance(out, Tensor)
    # The tensors travel as saved tensors, which the engine frees once this node has run; the
    # spec keeps only where they go.
    template = tuple(_TENSOR if isinstance(a, Tensor) else a for a in args)
    saved = reads.saved if determinism_check == "default" and not use_reentrant else None
    spec = (function, template, kwargs, rng_state, len(tensors), single, recompute_context, saved, use_reentrant)
    out = (out,) if single else tuple(out)
    # outputs a recording run would give without grad (detached ones) get none, as torch's
    constant = tuple(o for o in out if isinstance(o, Tensor) and not reads.would_require_grad(o))
    outs = _Checkpoint.apply(spec, out, constant, *tensors, *captured)
    return outs[0] if single and isinstance(outs, tuple) else outs


class _ReadTensors(core.Observer):
    """Dispatch observer over the segment's first run (under no_grad): collects the tensors
    requiring grad that ops read (only tensors made outside the segment do: they are its
    differentiable inputs, explicit or closed over), and follows which results a recording
    run would have made require grad (``live``): those of ops and custom Functions that read
    one, not a factory's, a ``detach()``'s or a non-differentiable op's."""

    def __init__(self, args, capture=True):
        self.capture = capture  # (False in the recomputation: only what its nodes save is noted)
        self.tensors = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        self._ids = {id(t) for t in self.tensors}
        # (weak: a result freed during the run leaves no entry whose id a new tensor could reuse)
        self.live = weakref.WeakValueDictionary()
        self.saved = []  # the metadata of what the recorded nodes save, in the order they save it

    def op_enter(self, op, inputs, attrs):
        if not self.capture:
            return
        for x in inputs:
            if isinstance(x, Tensor) and x.requires_grad and id(x) not in self._ids:
                self._ids.add(id(x))
                self.tensors.append(x)

    def op_exit(self, op, inputs, attrs, output):
        if output is not None:
            needs = [isinstance(x, Tensor) and self.would_require_grad(x) for x in inputs]
            live = op.differentiable and any(needs)
            outputs = output if isinstance(output, tuple) else (output,)
            if live:
                self._saves(op, inputs, needs, outputs)
            for o in outputs:
                if isinstance(o, Tensor):
                    self._mark(o, live and o.dtype.is_inexact)

    def _saves(self, op, inputs, needs, outputs):
        """Notes the metadata of the tensors the node of ``op`` saves, in the order it saves them
        (``OpNode``'s: its inputs, or those a wanted gradient reads, then its result)."""
        if op.save_inputs:
            reads = op.grad_reads
            order = range(len(inputs)) if reads is None else \
                dict.fromkeys(j for i, need in enumerate(needs) if need for j in reads[i])
            self.saved.extend(_metadata(inputs[j]) for j in order if isinstance(inputs[j], Tensor))
        if op.save_output:
            self.saved.extend(_metadata(o) for o in outputs if isinstance(o, Tensor))

    def op_write(self, tensor, result):
        if self.would_require_grad(result):
            self._mark(tensor, True)

    def function_exit(self, function, inputs, outputs):
        live = any(isinstance(x, Tensor) and self.would_require_grad(x) for x in inputs)
        for o in outputs:
            self._mark(o, live and o.dtype.is_inexact)

    def _mark(self, t, live):
        if live:
            self.live[id(t)] = t
        else:
            self.live.pop(id(t), None)

    def would_require_grad(self, t):
        """Whether ``t`` would require grad in a recording run: it does, or an op or a custom
        Function made it from one that would. A tensor made outside both (a factory's
        ``ones(3)``, a ``detach()``) would not."""
        return t.requires_grad or id(t) in self.live


def _metadata(t):
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


def _check_recomputation(saved, recomputed):
    """torch's determinism check: the tensors the recomputation saves are as many as, and of the
    shapes, dtypes and devices of, those the first run would have saved; else CheckpointError."""
    if len(saved) != len(recomputed):
        raise CheckpointError("torch.utils.checkpoint: A different number of tensors was saved during the original "
                              f"forward and recomputation.\nNumber of tensors saved during forward: {len(saved)}\n"
                              f"Number of tensors saved during recomputation: {len(recomputed)}.\n")
    different = "".join(f"tensor at position {i}:\nsaved metadata: {a}\nrecomputed metadata: {b}\n"
                        for i, (a, b) in enumerate(zip(saved, recomputed)) if a != b)
    if different:
        raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have different "
                              f"metadata than during the forward pass.\n{different}.\n")


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, spec, out, constant, *tensors):
        # ``out``: the first run's values, computed without recording; this node links them
        # to the segment's differentiable inputs, but for the ``constant`` ones.
        ctx.spec = spec
        ctx.save_for_backward(*tensors)
        ctx.mark_non_differentiable(*constant)
        return out

    @staticmethod
    def backward(ctx, *grad_outputs):
        function, template, kwargs, rng_state, n_args, single, recompute_context, saved, reentrant = ctx.spec
        if reentrant and not _is_checkpoint_valid():
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                               "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
                               "set use_reentrant=False, or call .backward() without passing the `inputs` argument.")
        tensors = ctx.saved_tensors
        inputs = [t.detach().requires_grad_(t.requires_grad) for t in tensors[:n_args]]
        swap = iter(inputs)
        call_args = [next(swap) if a is _TENSOR else a for a in template]
        state = get_rng_state()
        if rng_state is not None:
            set_rng_state(rng_state)
        checks = [_ReadTensors(inputs, capture=False)] if saved is not None else []
        core.OBSERVERS.extend(checks)
        try:
            with enable_grad(), recompute_context:
                out = function(*call_args, **kwargs)
        finally:
            for check in checks:
                core.OBSERVERS.remove(check)
            set_rng_state(state)
        for check in checks:
            _check_recomputation(saved, check.saved)
        outs = (out,) if single else tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        wrt = inputs + list(tensors[n_args:])
        need = [t.requires_grad for t in wrt]
        grads = recompute_grad([o for o, _ in pairs], [t for t, n in zip(wrt, need) if n],
                               [g for _, g in pairs]) if pairs and any(need) else []
        grads = iter(grads)
        return (None, None, None) + tuple(next(grads) if n else None for n in need)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules/callables) on ``input`` in
    ``segments`` consecutive chunks, checkpointing every chunk but the last (whose activations
    backward needs at once anyway).

    Raises:
        ValueError: ``segments`` is not in ``[1, len(functions)]``.
    """
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if not 1 <= segments <= max(len(functions), 1):
        raise ValueError(f"segments must be between 1 and {len(functions)}, got {segments}")
    size = len(functions) // segments

    def run(chunk):
        def forward(x):
            for f in chunk:
                x = f(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(functions[start:end + 1]), input, use_reentrant=use_reentrant, **kwargs)
    return run(functions[end + 1:])(input)
