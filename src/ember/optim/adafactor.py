"""Adafactor: Adam-like steps with a factored second moment (``torch.optim.Adafactor``)."""
from .._backend import namespace
from .optimizer import Optimizer, _step_tensor, _zeros
from .._tensor import Tensor

__all__ = ["Adafactor"]


def _lerp_(start, end, weight):
    """``start.lerp_(end, weight)`` on arrays, with torch's two formulas (exact at weight 1)."""
    if weight < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


class Adafactor(Optimizer):
    r"""Adafactor, as PyTorch 2.13 implements it (no first moment, relative step size).

    For each parameter :math:`\theta` with gradient :math:`g` (negated when ``maximize``), at
    step :math:`t`::

        β̂2 = t^c                                     (c = beta2_decay ≤ 0; the weight of g²)
        ρ = min(γ, 1/√t);  α = max(ε2, RMS(θ)) · ρ     (RMS(θ) read before the decay)
        θ ← θ (1 − γ λ)                               (weight_decay λ ≠ 0)
        θ of 1 dim:     v ← lerp(v, g², β̂2);  V = v
        θ of ≥ 2 dims:  r ← lerp(r, mean(g², -1), β̂2);  c ← lerp(c, mean(g², -2), β̂2)
                        V = r c / max(mean(r, -2), ε1)   (outer product over the last 2 dims)
        u = g / √max(V, ε1²);  θ ← θ − α / max(1, RMS(u)/d) · u

    Args:
        params (iterable): tensors or parameter-group dicts to optimize.
        lr (float or Tensor): learning rate γ (an upper bound on ρ). Default: 1e-2.
        beta2_decay (float): c, the decay exponent of the second moment's weight. Default: -0.8.
        eps (tuple[float or None, float]): (ε1, ε2): ε1 floors the variance estimate (None: the
            parameter dtype's machine epsilon); ε2 floors RMS(θ). Default: (None, 1e-3).
        d (float): clipping threshold on RMS(u). Default: 1.0.
        weight_decay (float): decoupled weight decay λ. Default: 0.0.
        foreach (bool, optional), maximize (bool): as in PyTorch (one implementation).

    State (per parameter): ``step`` (0-d float tensor); ``variance`` (shape of θ) for θ of at most
    one dimension, else ``row_var`` (θ's shape with last dim 1) and ``col_var`` (θ's shape with
    dim -2 of size 1).

    Raises:
        ValueError: lr < 0, beta2_decay > 0, ε1 or ε2 < 0, d < 1, weight_decay < 0; a tensor lr
            of more than one element.
        RuntimeError: a complex parameter.

    Source: Shazeer & Stern, "Adafactor: Adaptive Learning Rates with Sublinear Memory Cost"
    (ICML 2018); https://pytorch.org/docs/stable/generated/torch.optim.Adafactor.html
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        checks = [(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
                  (0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}"),
                  (eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}"),
                  (0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}"),
                  (1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}"),
                  (0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, param, group):
        if param.dtype.is_complex:
            raise RuntimeError("Adafactor does not support complex parameters")
        state = {"step": _step_tensor()}
        if param.dim() > 1:
            xp, shape = namespace(param._data), list(param.shape)
            row, col = shape[:-1] + [1], shape[:-2] + [1] + shape[-1:]
            state["row_var"] = Tensor._make(xp.zeros(row, dtype=param._data.dtype))
            state["col_var"] = Tensor._make(xp.zeros(col, dtype=param._data.dtype))
        else:
            state["variance"] = _zeros(param)
        return state

    def _update(self, param, grad, state, group):
        xp = namespace(param)
        lr, weight_decay, (eps1, eps2) = group["lr"], group["weight_decay"], group["eps"]
        if eps1 is None:
            eps1 = float(xp.finfo(param.dtype).eps)
        state["step"]._data += 1
        step = float(state["step"]._data)
        weight = step ** group["beta2_decay"]
        rms = float(xp.sqrt(xp.sum(xp.square(param)))) / param.size ** 0.5  # torch: ZeroDivisionError when empty
        alpha = max(eps2, rms) * min(lr, 1 / step ** 0.5)
        if weight_decay != 0:
            param *= 1 - lr * weight_decay
        squared = grad * grad
        if "variance" in state:
            variance = state["variance"]._data
            _lerp_(variance, squared, weight)
            estimate = variance.copy()
        else:
            row_var, col_var = state["row_var"]._data, state["col_var"]._data
            _lerp_(row_var, xp.mean(squared, axis=-1, keepdims=True), weight)
            _lerp_(col_var, xp.mean(squared, axis=-2, keepdims=True), weight)
            estimate = xp.matmul(row_var, col_var)
            estimate /= xp.maximum(xp.mean(row_var, axis=-2, keepdims=True), eps1)
        update = grad / xp.sqrt(xp.maximum(estimate, eps1 * eps1))
        update_rms = float(xp.sqrt(xp.sum(xp.square(update)))) / (max(update.size, 1) ** 0.5 * group["d"])
        param -= (alpha / max(1.0, update_rms)) * update
