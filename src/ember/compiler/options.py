"""The settings ``ember.compile`` checks before it compiles anything: the mode, the backend and
the code generator's options (``torch.compile``'s ``mode=``, ``backend=`` and ``options=``)."""
from .backends import OPTIONS
from .config_module import INDUCTOR, inductor_options
from .custom_backend import is_custom
from .exc import InvalidBackend

__all__ = ["MODES", "BACKENDS", "list_backends", "resolve"]

MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
BACKENDS = ("inductor", "eager", "aot_eager")
_TAGS = {"inductor": (), "eager": ("debug",), "aot_eager": ("debug",)}  # torch's tags of these
# Torch's inductor option names that ember's code generator reads (each takes a bool, as torch's);
# the code generator may add its own through ``backends.OPTIONS``; the other keys of
# ``torch._inductor.config`` scripts set (``config_module.INDUCTOR``) are accepted and ignored, any
# other is an error listing them all.
_OPTIONS = ("max_autotune", "max_autotune_gemm", "epilogue_fusion", "coordinate_descent_tuning",
            "freezing", "triton.cudagraphs", "trace.enabled", "trace.graph_diagram", "fx_graph_cache")
# (torch's "lite" mode runs each op as its eager kernel unless a region asks for inductor: the
# captured graph run node by node, ember's "aot_eager")
_MODE_OPTIONS = {"default": {}, "lite": {}, "reduce-overhead": {"triton.cudagraphs": True},
                 "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
                 "max-autotune": {"max_autotune": True, "triton.cudagraphs": True, "coordinate_descent_tuning": True}}


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names ``ember.compile(backend=...)`` accepts, sorted, less those tagged with
    one of ``exclude_tags`` (``torch.compiler.list_backends``: ``"eager"`` and ``"aot_eager"``
    are tagged ``"debug"``; ``exclude_tags=()`` lists all)."""
    return sorted(name for name in BACKENDS if not set(_TAGS[name]) & set(exclude_tags or ()))


def resolve(backend, mode, options):
    """``(backend name, options)``: the backend (``"inductor"`` when None) and the code
    generator's options: ``torch._inductor.config``'s keys set away from their defaults, under
    the mode's, under ``options`` (``options["mode"]`` names the mode).

    An option's name may use ``-`` for ``_`` (``"max-autotune"``), as torch's. Mode ``"lite"``
    runs the captured graph op by op (the ``"aot_eager"`` backend) where the backend is inductor.

    Raises:
        RuntimeError: both ``mode`` and ``options``; an unknown mode or option (the message
            lists the valid ones); an option's value of another type than torch's config
            default's (a bool for ember's own; torch's "Unexpected type of attr").
            ``ember._dynamo.exc.InvalidBackend``: an unknown backend name.
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if backend is None:
        backend = "inductor"
    if not is_custom(backend) and backend not in BACKENDS:  # (a callable: see custom_backend.py)
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `ember._dynamo.list_backends()` "
                             "for available backends.")
    known, named = set(_OPTIONS) | set(OPTIONS) | set(INDUCTOR), {}
    for key, value in (options or {}).items():
        name = key.replace("-", "_")
        if name not in known:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are {sorted(known)}")
        default = INDUCTOR.get(name, False)  # (the type torch's config gives the key; None: any)
        if default is not None and not isinstance(value, type(default)):
            raise RuntimeError(f"Unexpected type of attr {key}, got {type(value).__name__} should be "
                               f"{type(default).__name__}")
        if name in _OPTIONS or name in OPTIONS:  # (the others, cpp_wrapper, shape_padding...: accepted, ignored)
            named[name] = value
    if mode == "lite" and backend == "inductor":
        backend = "aot_eager"
    # torch._inductor.config's values set by the script, under the mode's and options=' own
    return backend, dict(inductor_options(_OPTIONS), **_MODE_OPTIONS[mode or "default"], **named, mode=mode or "default")
