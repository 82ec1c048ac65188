"""Which of ember's compile logs print (``torch._logging``): ``EMBER_LOGS`` (comma-separated
names, like ``TORCH_LOGS``) or :func:`set_logs` from Python. The logs ember has: ``graph_code``
(``graph``: each captured graph), ``graph_breaks``, ``guards``, ``recompiles``, ``dynamic``,
``output_code`` (the generated C), ``autotuning`` and ``complex``; each prints to stderr.
``EMBER_LOGS`` is read as torch reads ``TORCH_LOGS``: torch's names too (``graph_code``,
``kernel_code``, ``all``; ``+``/``-`` prefixes; module names), and a name neither has raises
torch's ValueError (a typo printed nothing before session 32)."""
import functools
import importlib.util
import os
import re

__all__ = ["set_logs", "log_enabled"]

# torch's set_logs arguments (torch 2.13); those ember has no log for are accepted and do nothing
_TORCH_NAMES = frozenset("""all dynamo aot autograd dynamic inductor distributed c10d ddp fsdp dtensor onnx bytecode
aot_graphs aot_joint_graph ddp_graphs graph graph_code graph_code_verbose graph_breaks side_effects graph_sizes
guards recompiles recompiles_verbose trace_source trace_call trace_bytecode output_code kernel_code schedule
perf_hints pre_grad_graphs post_grad_graphs ir_pre_fusion ir_post_fusion onnx_diagnostics fusion overlap export
modules cudagraphs sym_node compiled_autograd compiled_autograd_verbose cudagraph_static_inputs benchmarking
autotuning incremental graph_region_expansion inductor_metrics hierarchical_compile compute_dependencies
caching""".split())
# a torch name -> ember's log of the same thing
_ALIASES = {"graph_code": "graph", "graph_code_verbose": "graph", "recompiles_verbose": "recompiles",
            "kernel_code": "output_code"}
# the other names TORCH_LOGS takes (torch 2.13's "Valid settings"): accepted in EMBER_LOGS, doing nothing
_TORCH_ENV_NAMES = _TORCH_NAMES | frozenset("""annotation aot_graphs_effects async_compile auto_chunker cache
custom_format_test_artifact fake_tensor loop_ordering loop_tiling native_dsl node_runtime_estimation not_implemented
overlap_scheduling pp torch trace_shape_events verbose_guards""".split())
_EMBER_LOGS = {"graph", "graph_breaks", "guards", "recompiles", "dynamic", "output_code", "autotuning", "complex"}
_set_in_python = set()
# torch's form of a setting (``_gen_settings_regex``): names with one optional prefix, spaces only after a comma
_SETTING = re.compile(r"((\+|-)?[\w\.]+,\s*)*(\+|-)?[\w\.]+")


def log_enabled(name):
    """Whether ember's log ``name`` prints: named in ``EMBER_LOGS`` or turned on by :func:`set_logs`.

    Raises:
        ValueError: ``EMBER_LOGS`` names a log torch's ``TORCH_LOGS`` does not have (torch's
            message, listing the valid settings).
    """
    return name in _set_in_python or name in _from_env(os.environ.get("EMBER_LOGS", ""))


@functools.lru_cache(maxsize=8)
def _from_env(setting):
    """ember's logs that ``setting`` (``EMBER_LOGS``, read as torch reads ``TORCH_LOGS``) turns on:
    comma-separated names, ``+name``/``-name`` on (torch's verbosity prefixes: an artifact's log is on
    either way, as torch's; ember's logs have one level), ``all`` all of them; torch's
    names (``graph_code``, ``kernel_code``, ``all``) as :func:`set_logs` takes them; torch's
    names ember has no log for and module names (``torch._dynamo``, ``numpy``) do nothing; any other
    name, or a setting not of torch's form (an empty name, two prefixes, a space before a comma),
    is a ValueError, as torch's."""
    if setting == "":
        return frozenset()
    names = [n.strip()[1:] if n.strip()[:1] in "+-" else n.strip() for n in setting.split(",")]
    if _SETTING.fullmatch(setting) is None or not all(n in _TORCH_ENV_NAMES | _EMBER_LOGS or _module(n) for n in names):
        raise ValueError(f"\nInvalid log settings: {setting}, must be a comma separated list of fully\n"
                         "qualified module names, registered log names or registered artifact names.\n"
                         'For more info on various settings, try TORCH_LOGS="help"\nValid settings:\n'
                         + ", ".join(sorted(_TORCH_ENV_NAMES | _EMBER_LOGS)))
    return frozenset(_EMBER_LOGS) if "all" in names else frozenset(_ALIASES.get(n, n) for n in names)


def _module(name):
    """Whether ``name`` is a module's (torch's test: found by ``importlib``; ``torch.*`` names are
    taken unchecked, as finding one would import torch)."""
    if name.startswith("torch."):
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def set_logs(**kwargs):
    """Turns ember's compile logs on (``True`` or a ``logging`` level) and every other off
    (``torch._logging.set_logs``: each call replaces the last; ``set_logs()`` turns all off).
    ``all=`` turns every log on or off first. Takes torch's argument names: ``graph_code``,
    ``graph_breaks``, ``guards``, ``recompiles``, ``dynamic``, ``output_code``, ``autotuning``
    print ember's logs; the others (``dynamo=logging.DEBUG``, ``aot_graphs``) do nothing.

    Raises:
        TypeError: a name that is not one of torch's arguments (as torch's signature).
    """
    unknown = [k for k in kwargs if k not in _TORCH_NAMES and k not in _EMBER_LOGS]
    if unknown:
        raise TypeError(f"set_logs() got an unexpected keyword argument '{unknown[0]}'")
    chosen = set(_EMBER_LOGS) if kwargs.get("all") else set()
    for name, value in kwargs.items():
        name = _ALIASES.get(name, name)
        if name in _EMBER_LOGS:
            (chosen.add if value else chosen.discard)(name)
    _set_in_python.clear()
    _set_in_python.update(chosen)
