"""Gradient-recording modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each works as a context manager and as a decorator, as in
https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation
"""
import functools
import inspect
import threading
import weakref

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "InferenceVersions", "InferenceSaved", "SAVED_OUTSIDE",
           "CREATION_SWITCHES"]


class _State(threading.local):
    """One flag read by every op: is the tape recording? Per thread, as torch's grad mode (a new
    thread starts with it on); ``inference`` and ``anomaly`` are shared by all threads."""

    def __init__(self):
        self.enabled = True

    inference = property(lambda self: _SHARED[0], lambda self, value: _SHARED.__setitem__(0, value))
    anomaly = property(lambda self: _SHARED[1], lambda self, value: _SHARED.__setitem__(1, value))


_SHARED = [False, False]  # (inference, anomaly)


STATE = _State()

# Called with True when an ``inference_mode`` block starts making inference tensors and False
# when it stops (``_tensor`` swaps its constructors there: no per-op cost outside the mode).
CREATION_SWITCHES = []

INPLACE_OUTSIDE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                   "clone to get a normal tensor before doing inplace update.See "
                   "https://github.com/pytorch/rfcs/pull/17 for more details.")


SAVED_OUTSIDE = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in "
                 "inference mode in computation tracked by autograd. To work around this, you can make a "
                 "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                 "`torch.inference_mode()`.")


class InferenceSaved(Exception):
    """Raised by an inference tensor's counter when a node saving the tensor reads its version
    (``versions[-1]``: only the saving reads that index), so that the node checks whether a
    gradient it may compute reads the tensor (torch's RuntimeError :data:`SAVED_OUTSIDE`)."""


class InferenceVersions(list):
    """The version counter of an inference tensor, one made inside ``inference_mode`` (and of its
    views): torch's have none, so the bump that follows an in-place write outside the mode
    raises torch's RuntimeError instead (after the write, as torch's check), and a node saving
    the tensor is told by :class:`InferenceSaved` (the plain list a normal tensor's counter is
    costs the saving nothing). ``Tensor.is_inference()`` is whether a tensor's counter is one
    of these."""
    __slots__ = ()

    def __setitem__(self, index, value):
        if not STATE.inference:
            raise RuntimeError(INPLACE_OUTSIDE)
        list.__setitem__(self, index, value)

    def __getitem__(self, index):
        if index == -1:
            raise InferenceSaved
        return list.__getitem__(self, index)


def _switch_creation(inference):
    if inference != STATE.inference:
        STATE.inference = inference
        for switch in CREATION_SWITCHES:
            switch(inference)


class _DualLevel:
    """Forward-mode AD's state (``autograd.forward_ad``): the open dual level (None or 0: one at
    a time, as in PyTorch) and, while it is open, each dual tensor's tangent (``tangents``; the
    printer reads it too)."""
    __slots__ = ("level", "tangents")

    def __init__(self):
        self.level = None
        self.tangents = None


class Tangents:
    """The tangents of the open dual level, by tensor: an entry lives as long as its tensor.
    (Keyed by identity: a WeakKeyDictionary would compare tensors with ``==``, elementwise.)"""
    __slots__ = ("_entries",)

    def __init__(self):
        self._entries = {}

    def get(self, tensor):
        entry = self._entries.get(id(tensor))
        return None if entry is None else entry[1]

    def __setitem__(self, tensor, tangent):
        key = id(tensor)
        entries = self._entries
        entries[key] = (weakref.ref(tensor, lambda _: entries.pop(key, None)), tangent)

    def pop(self, tensor):
        self._entries.pop(id(tensor), None)


DUAL = _DualLevel()


def is_grad_enabled():
    """True when ops record a graph for backward."""
    return STATE.enabled


def is_inference_mode_enabled():
    """Whether an :class:`inference_mode` block is active on this thread
    (https://pytorch.org/docs/stable/generated/torch.is_inference_mode_enabled.html)."""
    return STATE.inference


class _GradMode:
    """Base of the grad-mode context managers; subclasses say which mode ``_enter`` sets."""
    mode = True

    def __enter__(self):
        self._prev = STATE.enabled
        STATE.enabled = self.mode
        return self

    def __exit__(self, *exc):
        STATE.enabled = self._prev
        return False

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                with self.clone():
                    value = next(gen)
                while True:
                    try:
                        with self.clone():
                            sent = yield value
                            value = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        """A new, unentered context manager of the same kind and setting (the decorator form
        enters a fresh one per call)."""
        return type(self)()


class no_grad(_GradMode):
    """Ops inside record no graph; results have ``requires_grad=False``."""
    mode = False


class enable_grad(_GradMode):
    """Turns recording back on inside ``no_grad``."""
    mode = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(mode)``: sets recording on or off; it takes effect at construction too,
    so ``set_grad_enabled(False)`` as a plain call works as in PyTorch."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = STATE.enabled
        STATE.enabled = self.mode

    def __enter__(self):
        return self

    def clone(self):
        """A new, unentered context manager of the same kind and setting (the decorator form
        enters a fresh one per call)."""
        return type(self)(self.mode)


class inference_mode(_GradMode):
    """``inference_mode(mode=True)``: ``no_grad``, and the tensors made inside are inference
    tensors (``is_inference()``; views of other tensors are not), as torch's: outside the mode
    an in-place write to one raises RuntimeError, as do ``requires_grad_()`` and reading
    ``_version`` (https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html)."""

    def __init__(self, mode=True):
        self.mode = not mode
        self._inference = bool(mode)

    def __enter__(self):
        self._prev_inf = STATE.inference
        _switch_creation(self._inference)
        return super().__enter__()

    def __exit__(self, *exc):
        _switch_creation(self._prev_inf)
        return super().__exit__(*exc)

    def clone(self):
        """A new, unentered context manager of the same kind and setting (the decorator form
        enters a fresh one per call)."""
        return type(self)(self._inference)


class set_multithreading_enabled(_GradMode):
    """``set_multithreading_enabled(mode)``: torch's switch for running a backward on several
    threads; ember's engine runs one thread either way, so it records the mode and changes
    nothing (a context manager, a decorator or a plain call, as torch's)."""

    def __init__(self, mode):
        self.mode = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def clone(self):
        """A new, unentered context manager of the same setting."""
        return type(self)(self.mode)

