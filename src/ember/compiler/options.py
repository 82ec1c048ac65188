"""The settings ``ember.compile`` checks before it compiles anything: the mode, the backend and
the code generator's options (``torch.compile``'s ``mode=``, ``backend=`` and ``options=``)."""
from .backends import OPTIONS
from .exc import InvalidBackend

__all__ = ["MODES", "BACKENDS", "resolve"]

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
BACKENDS = ("inductor", "eager", "aot_eager")
# Torch's inductor option names that ember's code generator reads (an option unknown to it is an
# error that lists these); the code generator may add its own through ``backends.OPTIONS``.
_OPTIONS = ("max_autotune", "max_autotune_gemm", "epilogue_fusion", "coordinate_descent_tuning",
            "freezing", "triton.cudagraphs", "trace.enabled", "trace.graph_diagram", "fx_graph_cache")
_MODE_OPTIONS = {"default": {}, "reduce-overhead": {"triton.cudagraphs": True},
                 "max-autotune": {"max_autotune": True, "triton.cudagraphs": True},
                 "max-autotune-no-cudagraphs": {"max_autotune": True}}


def resolve(backend, mode, options):
    """``(backend name, options)``: the backend (``"inductor"`` when None) and the code
    generator's options with the mode's (``options["mode"]`` names the mode).

    Raises:
        RuntimeError: both ``mode`` and ``options``; an unknown mode or option (the message
            lists the valid ones). NotImplementedError: a callable backend.
            ``ember._dynamo.exc.InvalidBackend``: an unknown backend name.
    """
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
    known = set(_OPTIONS) | set(OPTIONS)
    for key in options or {}:
        if key not in known:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are {sorted(known)}")
    return backend, dict(_MODE_OPTIONS[mode or "default"], **(options or {}), mode=mode or "default")
