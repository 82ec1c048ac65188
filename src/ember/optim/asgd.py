"""ASGD: averaged stochastic gradient descent (``torch.optim.ASGD``)."""
from .._dtype import get_default_dtype
from .optimizer import Optimizer, _check_nonnegative, _step_tensor, _zeros

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Averaged SGD: SGD with a decaying step size η_t, and a running (Polyak–Ruppert) average
    of the iterates that starts at step t0.

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``), at
    step :math:`t`::

        g ← g + λ_wd θ
        θ ← θ (1 − λ η) − η g
        ax ← ax + μ (θ − ax)         (ax ← θ while μ = 1)
        η ← γ / (1 + λ γ t)^α;   μ ← 1 / max(1, t − t0)

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float): learning rate γ. Default: 1e-2.
        lambd (float): decay term λ. Default: 1e-4.
        alpha (float): power α of the η update. Default: 0.75.
        t0 (float): the step at which averaging starts. Default: 1e6.
        weight_decay (float): L2 penalty λ_wd. Default: 0.
        foreach, maximize, capturable, differentiable: as in PyTorch (one implementation).

    State (per parameter): ``step``, ``eta``, ``mu`` (0-d float tensors, float32 unless the
    default dtype is float64, so η and μ round as PyTorch's do) and ``ax``, the average.

    Raises:
        ValueError: negative lr or weight_decay.

    Source: Polyak & Juditsky, "Acceleration of Stochastic Approximation by Averaging" (1992);
    https://pytorch.org/docs/stable/generated/torch.optim.ASGD.html
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_nonnegative(lr=lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, param, group):
        return {"step": _step_tensor(), "eta": _step_tensor().fill_(group["lr"]),
                "mu": _step_tensor().fill_(1.0), "ax": _zeros(param)}

    def _update(self, param, grad, state, group):
        lr, lambd, weight_decay = group["lr"], group["lambd"], group["weight_decay"]
        state["step"]._data += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        eta, mu, ax = state["eta"]._data, state["mu"]._data, state["ax"]._data
        param *= 1 - lambd * float(eta)
        param -= float(eta) * grad
        if float(mu) != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        # PyTorch makes the new η and μ tensors of the default dtype before copying them into
        # the state, so they round to it even where the state has been cast to float64.
        t, rounded = float(state["step"]._data), get_default_dtype().np.type
        eta[...] = rounded(lr / ((1 + lambd * lr * t) ** group["alpha"]))
        mu[...] = rounded(1 / max(1, t - group["t0"]))
