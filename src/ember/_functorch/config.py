"""``torch._functorch.config``: AOTAutograd's settings scripts set (``donated_buffer``,
``activation_memory_budget``, ``enable_autograd_cache``), with torch 2.13's keys and defaults;
ember accepts them and ignores them (its joint graphs have no partitioner budget, donated
buffers or autograd cache to steer); an unknown key raises torch's AttributeError (see
:mod:`ember.compiler.config_module`)."""
import sys

from ..compiler.config_module import install

install(sys.modules[__name__], {
    "activation_memory_budget": 1.0, "activation_memory_budget_runtime_estimator": "flops",
    "activation_memory_budget_solver": "dp", "aggressive_recomputation": False, "ban_recompute_reductions": True,
    "cse": True, "debug_assert": False, "debug_partitioner": False, "donated_buffer": True,
    "enable_autograd_cache": True, "enable_remote_autograd_cache": None, "fake_tensor_allow_meta": True,
    "fake_tensor_propagate_real_tensors": False, "functionalize_rng_ops": False,
    "guess_tangent_strides_as_outputs": True, "max_dist_from_bw": 1000, "recompute_views": False,
    "strict_autograd_cache": False, "treat_parameters_as_free_to_save": True, "unlift_effect_tokens": False,
    "view_replay_for_aliased_outputs": True,
})
