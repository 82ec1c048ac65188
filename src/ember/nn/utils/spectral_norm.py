"""The hook-based spectral normalisation of ``torch.nn.utils.spectral_norm`` (Miyato et al.,
2018, https://arxiv.org/abs/1802.05957; https://pytorch.org/docs/stable/generated/torch.nn.utils.spectral_norm.html),
which GAN programs and their checkpoints use (torch recommends
:func:`ember.nn.utils.parametrizations.spectral_norm` instead): the parameter ``name``
becomes ``name_orig``, buffers ``name_u`` and ``name_v`` hold the power iteration's vectors
(drawn from N(0, 1) and normalised, as torch draws them), and a forward pre-hook sets
``name = name_orig / sigma``, ``sigma = u . (W v)`` for W the weight as a matrix with ``dim``
first, after ``n_power_iterations`` steps in training mode. state_dict keys are torch's.
"""
from ..._ops.linalg import matmul
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter
from .hooks import remove_reparametrization

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that sets ``module.<name>`` to the spectrally normalised weight."""

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight):
        """``weight`` as a matrix: ``dim`` first, the other dims flattened."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        """``<name>_orig / sigma``, after the power iteration's steps when asked (in place on
        the buffers ``<name>_u`` and ``<name>_v``)."""
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(matmul(matrix.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(matmul(matrix, v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()  # the weight's graph keeps these values
        return weight / u.dot(matmul(matrix, v))

    def remove(self, module):
        """Puts ``module.<name>`` back as a parameter holding the normalised weight."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        """Moves ``module.<name>`` to ``<name>_orig``, draws ``<name>_u`` and ``<name>_v``,
        registers the hook."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectrally normalises ``module.<name>``; returns ``module``. ``dim``: the output dim
    (default 1 for transposed convolutions, else 0). RuntimeError when already normalised."""
    if dim is None:
        dim = 1 if getattr(module, "transposed", False) else 0  # a ConvTranspose's output dim
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Puts the normalised ``module.<name>`` back as a plain parameter; ValueError when it was
    not normalised."""
    return remove_reparametrization(module, SpectralNorm, name, "spectral_norm")
