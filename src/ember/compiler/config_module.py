"""Settings modules as torch's (``torch._inductor.config``, ``torch._functorch.config``): attribute
bags real scripts set (``torch._inductor.config.coordinate_descent_tuning = True``), each key
with torch 2.13's default, sub-configs read and set through a dot (``config.triton.cudagraphs``),
an unknown key raising torch's ``AttributeError("torch._inductor.config.foo does not exist")``,
and ``patch(...)`` for a ``with`` block or a decorated function.

:data:`INDUCTOR` holds the inductor keys ember's compile reads (:func:`inductor_options`: the ones
set away from torch's default become code generator options, as ``options=`` names them) and the
ones scripts commonly set that ember accepts and ignores (it has no Triton, CUDA graphs or
autotuning caches to steer); docs/compile.md lists both. :class:`DynamoConfig` is
``ember._dynamo.config`` (``torch._dynamo.config``: the recompile limit, automatic dynamic shapes).
"""
import contextlib
import os
import types

__all__ = ["ConfigModule", "ConfigPatch", "DynamoConfig", "INDUCTOR", "install", "inductor_options"]

# torch._inductor.config's keys scripts set, with torch 2.13's defaults ("a.b": sub-config a's b)
INDUCTOR = {
    # what ember's code generator reads (compiler/options.py's names)
    "max_autotune": False, "max_autotune_gemm": False, "epilogue_fusion": True, "coordinate_descent_tuning": False,
    "freezing": False, "triton.cudagraphs": False, "trace.enabled": False, "trace.graph_diagram": False,
    "fx_graph_cache": True,
    # accepted and ignored
    "aggressive_fusion": False, "allow_buffer_reuse": True, "autotune_in_subproc": False, "autotune_local_cache": True,
    "batch_fusion": True, "benchmark_fusion": False, "benchmark_kernel": False, "combo_kernels": False,
    "compile_threads": min(32, os.cpu_count() or 1), "comprehensive_padding": True, "conv_1x1_as_mm": False,
    "coordinate_descent_check_all_directions": False, "cpp.dynamic_threads": False,
    "cpp.enable_kernel_profile": False, "cpp.simdlen": None, "cpp.threads": -1, "cpp.vec_isa_ok": None,
    "cpp.weight_prepack": True, "cpp_wrapper": False, "cuda.compile_opt_level": "-O1", "dce": False, "debug": False,
    "disable_progress": True, "emulate_precision_casts": False, "fallback_random": False,
    "force_disable_caches": False, "force_fuse_int_mm_with_mul": False, "freezing_discard_parameters": False,
    "fx_graph_remote_cache": None, "generate_intermediate_hooks": False, "graph_partition": True,
    "group_fusion": False, "implicit_fallbacks": True, "inplace_buffers": True, "joint_graph_constant_folding": True,
    "layout_optimization": True, "max_autotune_conv_backends": "ATEN,TRITON",
    "max_autotune_gemm_backends": "ATEN,TRITON,CPP", "max_autotune_pointwise": False, "max_fusion_size": 64,
    "nan_asserts": False, "online_softmax": True, "pattern_matcher": True, "permute_fusion": False,
    "profiler_mark_wrapper_call": False, "reorder_for_compute_comm_overlap": False, "reorder_for_locality": True,
    "search_autotune_cache": False, "shape_padding": True, "size_asserts": True, "split_reductions": True,
    "triton.autotune_cublasLt": True, "triton.autotune_pointwise": True, "triton.cudagraph_skip_dynamic_graphs": False,
    "triton.cudagraph_trees": True, "triton.descriptive_names": "original_aten", "triton.max_tiles": None,
    "triton.multi_kernel": 0, "triton.persistent_reductions": True, "triton.unique_kernel_names": True,
    "triton.use_block_ptr": False, "unroll_reductions_threshold": 8, "use_fast_math": False, "use_mixed_mm": True,
    "verbose_progress": False,
}
_INDUCTOR_DEFAULTS = dict(INDUCTOR)


def inductor_options(names):
    """``{name: value}``: the keys of ``names`` whose ``torch._inductor.config`` value differs
    from torch's default (a script's ``config.max_autotune = True``), as ``compile``'s options."""
    return {n: INDUCTOR[n] for n in names if n in INDUCTOR and INDUCTOR[n] != _INDUCTOR_DEFAULTS[n]}


class ConfigPatch(contextlib.ContextDecorator):
    """A ``config.patch(...)``: the changes, and the values they replaced (a stack: re-entrant).
    A key the config lacks raises AttributeError where it has torch's check (a config module)."""

    def __init__(self, config, changes):
        self.config, self.changes, self.prior = config, changes, []

    def __enter__(self):
        self.prior.append({k: getattr(self.config, k, _UNSET) for k in self.changes})
        for k, v in self.changes.items():
            setattr(self.config, k, v)

    def __exit__(self, *exc_info):
        for k, v in self.prior.pop().items():
            if v is _UNSET:
                self.config.__dict__.pop(k, None)
            else:
                setattr(self.config, k, v)


_UNSET = object()


def _missing(where, name):
    return AttributeError(f"{where}.{name} does not exist")


class _SubConfig:
    """A config's sub-config (``config.triton``): its keys read and set through it."""

    def __init__(self, module, prefix):
        object.__setattr__(self, "_at", (module, prefix))

    def __getattr__(self, name):
        module, prefix = self._at
        return getattr(module, f"{prefix}.{name}")

    def __setattr__(self, name, value):
        module, prefix = self._at
        setattr(module, f"{prefix}.{name}", value)


class ConfigModule(types.ModuleType):
    """A module whose keys are its ``_config`` dict's (``{"key" or "sub.key": value}``); what
    :func:`install` turns a config module into."""

    def __getattr__(self, name):  # (only for what the module's own dict lacks)
        config = self.__dict__["_config"]
        if name in config:
            return config[name]
        if any(k.startswith(name + ".") for k in config):
            return _SubConfig(self, name)
        raise _missing(self.__name__, name)

    def __setattr__(self, name, value):
        config = self.__dict__.get("_config", ())
        if name in config:
            config[name] = value
        elif name in self.__dict__ or name.startswith("__"):
            super().__setattr__(name, value)
        else:
            raise _missing(self.__name__, name)

    def patch(self, arg1=None, arg2=None, **kwargs):
        """Sets keys for a ``with`` block or a decorated function's calls, then restores them:
        ``patch("key", value)``, ``patch(key=value)`` or ``patch({"sub.key": value})``."""
        changes = {arg1: arg2} if isinstance(arg1, str) else dict(arg1 or {}, **kwargs)
        return ConfigPatch(self, changes)

    def get_config_copy(self):
        """``{key: value}`` of every key (sub-configs' as ``"sub.key"``)."""
        return dict(self.__dict__["_config"])


def install(module, config):
    """Makes ``module`` (a config module being imported) a :class:`ConfigModule` over ``config``."""
    module._config = config
    module.__class__ = ConfigModule


# torch._dynamo.config's keys scripts set that ember accepts and ignores, with torch 2.13's defaults
# (capture_scalar_outputs: ember breaks at .item(), its results the same; no DDP graph splitting...)
_DYNAMO_IGNORED = {
    "suppress_errors": False, "verbose": False, "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False, "optimize_ddp": True, "accumulated_recompile_limit": 256,
    "inline_inbuilt_nn_modules": True, "assume_static_by_default": True, "force_parameter_static_shapes": True,
    "force_nn_module_property_static_shapes": True, "allow_rnn": False, "specialize_int": False,
    "specialize_float": False, "guard_nn_modules": True, "error_on_recompile": False, "dynamic_shapes": True,
    "replay_record_enabled": False, "compiled_autograd": False, "skip_nnmodule_hook_guards": True,
    "trace_numpy": True, "numpy_default_float": "float64", "log_compilation_metrics": True,
    "raise_on_ctx_manager_usage": True, "optimize_ddp_lazy_compile": False,
    "prefer_deferred_runtime_asserts_over_guards": False, "do_not_emit_runtime_asserts": False,
}


class DynamoConfig:
    """``ember._dynamo.config``: ``recompile_limit`` (8, torch's default) graphs per code object;
    ``automatic_dynamic_shapes`` (True): with ``dynamic=None``, sizes that changed become symbols;
    ``fail_on_recompile_limit_hit`` (False): past the limit, raise ``FailOnRecompileLimitHit``
    instead of running eagerly. Other keys of torch's that scripts set (``suppress_errors``,
    ``capture_scalar_outputs``...) are accepted and do nothing; an unknown key raises torch's
    ``AttributeError`` (``"...config.recompile_limt does not exist"``), read or set."""
    recompile_limit = 8
    automatic_dynamic_shapes = True
    fail_on_recompile_limit_hit = False
    locals().update(_DYNAMO_IGNORED)

    def __setattr__(self, name, value):
        if not hasattr(type(self), name):
            raise _missing("ember._dynamo.config", name)
        super().__setattr__(name, value)

    def __getattr__(self, name):  # (only for what neither the object nor its class holds)
        raise _missing("ember._dynamo.config", name)
    cache_size_limit = property(lambda self: self.recompile_limit,  # torch's older name, read and set
                                lambda self, value: setattr(self, "recompile_limit", value))

    def patch(self, arg1=None, arg2=None, **kwargs):
        """Sets the settings for a ``with`` block or a decorated function's calls, then restores
        them (``torch._dynamo.config.patch``): ``patch("name", value)``, ``patch(name=value)`` or
        ``patch({"name": value})``."""
        changes = {arg1: arg2} if isinstance(arg1, str) else dict(arg1 or {}, **kwargs)
        return ConfigPatch(self, changes)
