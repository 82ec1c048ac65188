"""Code generation for captured graphs: ``compile_graph(graph, options) -> callable``.

The C backend (fused loops, GEMMs through SciPy's BLAS with epilogues, ember's vector math)
when a C compiler is found; otherwise, or when compiling fails, the Python backend (generated
Python calling each node's kernel), with one warning saying why. The callable takes the
placeholders' NumPy arrays in order, writes the graph's mutations into them, and returns the
outputs' arrays (a list); the graph IR is :mod:`ember.compiler.graph`'s.
"""
import sys
import warnings

from ..._ops.args import caller_level
from ..complex_decompose import decompose_complex
from . import toolchain
from .background import compile_in_background
from .c import compile_c, log_enabled
from .gelu_gradient import gelu_gradient_in_forward
from .python import compile_python

__all__ = ["compile_graph", "compile_python", "OPTIONS", "log_enabled"]

# Options of its own the code generator accepts beyond torch's inductor names.
OPTIONS = ("async_compile",)

_warned = set()


def _warn_once(kind, message):
    if kind not in _warned:
        _warned.add(kind)
        warnings.warn(message, RuntimeWarning, stacklevel=caller_level())


def compile_graph(graph, options=None):
    """Compiles ``graph`` (a captured :class:`ember.compiler.graph.Graph`).

    Options (torch.compile's inductor names where they apply): ``max_autotune`` (time each
    GEMM's and each convolution's candidate kernels on its real shapes instead of the cost
    models; choices cached on disk), ``cpp_wrapper``/``epilogue_fusion`` accepted;
    ``async_compile`` (ember's own: run generated Python while a background thread builds the
    C, :mod:`.background`; not with ``max_autotune``, whose timings want the machine). Complex
    values are computed as real and imaginary parts (:mod:`ember.compiler.complex_decompose`;
    ``fn.complex_counts`` says what it did). A float32 GELU gradient whose forward the graph
    holds is computed in the forward's loop of the C (:mod:`.gelu_gradient`). A graph with
    size symbols (dynamic shapes) compiles once for all sizes: ``fn(arrays, sizes)`` (``sizes``:
    {symbol: int}); one with control flow as well runs as generated Python. Never raises for a missing or failing
    compiler: the Python backend runs instead, with a RuntimeWarning (once per process for a
    missing compiler; naming the log file for a failed build).
    """
    options = dict(options or {})
    graph = decompose_complex(graph, log_enabled("complex"))
    fn = _compile(graph, options)
    # what the complex decomposition did, for counters["complex"] (eval_frame counts it)
    fn.complex_counts = getattr(graph, "complex_counts", {})
    return fn


def _compile(graph, options):
    if graph.any_shape or (graph.symbols and graph.subgraphs()):
        # A subgraph run at other sizes than traced (associative_scan's combine) has no symbols
        # for them; control-flow subgraphs take no sizes: generated Python, shape-generic.
        if log_enabled("dynamic"):
            print(f"[ember.compile dynamic] graph with sizes {', '.join(graph.symbols) or 'of any shape'} "
                  f"and control flow: running generated Python (shape-generic)", file=sys.stderr)
        return compile_python(graph)
    if graph.subgraphs():  # control flow: the Python driver, each subgraph compiled on its own
        return compile_python(graph, lambda subgraph: compile_graph(subgraph, options))
    compiler = toolchain.find_compiler()
    if compiler is None:
        _warn_once("no-compiler", "ember.compile: no C compiler found ($CC, cc, gcc, clang or the "
                   "ziglang wheel: pip install ember[compile]); running generated Python instead")
        return compile_python(graph)
    try:  # (a read-only home, $XDG_CACHE_HOME naming a file: the user's run goes on)
        toolchain.cache_dir()
    except (OSError, ValueError) as e:
        _warn_once("no-cache", f"ember.compile: the compile cache cannot be used ({e}); running generated Python instead")
        return compile_python(graph)
    # a pass for the C alone: its GeluBackward(1.0, x, None) fuses into the forward's loop; the
    # Python backend runs the graph as captured (its kernels take arrays, not the constant 1.0)
    c_graph = gelu_gradient_in_forward(graph)
    if options.get("async_compile") and not options.get("max_autotune"):
        return compile_in_background(graph, options, compiler, c_graph)
    try:
        return compile_c(c_graph, options, compiler)
    except toolchain.CompileError as e:
        warnings.warn(f"ember.compile: compiling the generated C failed (log: {e.log}); "
                      f"running generated Python instead", RuntimeWarning, stacklevel=caller_level())
        return compile_python(graph)
