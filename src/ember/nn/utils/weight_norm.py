"""The hook-based weight normalisation of ``torch.nn.utils.weight_norm`` (Salimans & Kingma,
2016, https://arxiv.org/abs/1602.07868; https://pytorch.org/docs/stable/generated/torch.nn.utils.weight_norm.html),
deprecated in torch in favour of :func:`ember.nn.utils.parametrizations.weight_norm` and kept
because programs and their checkpoints use it: the parameter ``name`` is replaced by
``name_g`` (the norms, shaped to broadcast) and ``name_v`` (the direction), and a forward
pre-hook recomputes ``name = v * (g / ||v||)`` before every call. state_dict keys are
torch's (``weight_g``, ``weight_v``), so its checkpoints load.
"""
import warnings

from ..._ops.core import named
from ..parameter import Parameter
from .hooks import remove_reparametrization

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped to broadcast against ``v``
    (a 0-d norm of the whole tensor when ``dim`` is -1)."""
    if dim == -1:
        return v.norm(pow)
    dims = [d for d in range(v.ndim) if d != dim]
    return v.norm(pow, dims, keepdim=True)


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name, dim):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module):
        """``v * (g / ||v||)`` from the module's ``<name>_g`` and ``<name>_v``."""
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        weight = v * (g / norm_except_dim(v, 2, self.dim))
        # torch fuses the first and last dims' case into one node; the others are a product
        return named(weight, "WeightNormInterfaceBackward0") if self.dim in (0, v.ndim - 1) else weight

    @staticmethod
    def apply(module, name, dim):
        """Splits ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and registers the hook."""
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        """Puts ``module.<name>`` back as a parameter holding the current weight."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replaces ``module.<name>`` by ``<name>_g * <name>_v / ||<name>_v||``, the norm over
    every dim but ``dim`` (the whole tensor for ``dim=None``); returns ``module``. FutureWarning
    as torch; RuntimeError when ``name`` is already normalised."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Puts the normalised ``module.<name>`` back as a plain parameter; ValueError when it was
    not normalised."""
    return remove_reparametrization(module, WeightNorm, name, "weight_norm")
