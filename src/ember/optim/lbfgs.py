"""L-BFGS: limited-memory BFGS with an optional strong-Wolfe line search (``torch.optim.LBFGS``)."""
import math

from .optimizer import Optimizer, _check_nonnegative
from .._backend import namespace
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad

__all__ = ["LBFGS"]


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped
    to ``bounds`` (default: the interval [x1, x2]); the bounds' midpoint when the cubic has no
    minimum (Nocedal & Wright, eq. 3.59)."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, lo), hi)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step t along d satisfying the strong Wolfe conditions (Nocedal & Wright, algorithms
    3.5 and 3.6: bracket, then zoom by cubic interpolation). ``evaluate(t)`` returns the loss
    and flat gradient at x + t d. Returns (loss, gradient, t, number of evaluations)."""
    d_norm = abs(d).max()
    f_new, g_new = evaluate(t)
    evals, ls_iter = 1, 0
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    while ls_iter < max_ls:
        sufficient_decrease = not (f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev))
        if sufficient_decrease and abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g, done = [t], [f_new], [g_new], True
            break
        if not sufficient_decrease or gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev, t = t, f_new, g_new, gtd_new, t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom: shrink the bracket until a point satisfies the conditions.
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # Keep t away from the bracket's ends, where cubic steps make little progress.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


def _to_state(value):
    """Arrays and NumPy scalars (copied, in their namespace) as ember tensors (the state
    PyTorch keeps holds tensors)."""
    if isinstance(value, list):
        return [_to_state(v) for v in value]
    if hasattr(value, "dtype"):
        return Tensor._make(namespace(value).array(value))
    return value


def _from_state(value):
    if isinstance(value, list):
        return [_from_state(v) for v in value]
    if isinstance(value, Tensor):
        return value._data if value.ndim else value._data[()]
    return value


class LBFGS(Optimizer):
    r"""L-BFGS: quasi-Newton steps from the last ``history_size`` curvature pairs.

    One call of ``step(closure)`` runs up to ``max_iter`` iterations (``max_eval`` closure
    calls). With g the flat gradient of all parameters, each iteration::

        y = g − g_prev,  s = t d;  keep (y, s, 1/(yᵀs)) when yᵀs > 1e-10;  H₀ = yᵀs / yᵀy
        d = −H g    (two-loop recursion over the kept pairs)
        t = min(1, 1/‖g‖₁) γ on the first iteration, γ afterwards; or the strong-Wolfe step
        x ← x + t d

    and stops when max|g| ≤ tolerance_grad, the step or the loss change falls below
    tolerance_change, or the budgets run out.

    Args:
        params (iterable): tensors to optimize (one parameter group only).
        lr (float): learning rate γ. Default: 1.
        max_iter (int): iterations per ``step``. Default: 20.
        max_eval (int, optional): closure evaluations per ``step``. Default: max_iter * 5 // 4.
        tolerance_grad (float): first-order optimality tolerance. Default: 1e-7.
        tolerance_change (float): tolerance on loss and parameter changes. Default: 1e-9.
        history_size (int): number of curvature pairs kept. Default: 100.
        line_search_fn (str, optional): ``"strong_wolfe"`` or None. Default: None.
        maximize (bool): maximize the closure's value instead (PyTorch 2.14's option): the
            iterations minimise its negation. Default: False.

    ``step(closure)`` requires a closure that zeroes the gradients, computes the loss, calls
    ``backward`` and returns the loss; it returns the closure's first loss.

    Raises:
        ValueError: negative lr; more than one parameter group.
        RuntimeError: ``line_search_fn`` other than "strong_wolfe" (at the first line search).

    Source: Nocedal & Wright, "Numerical Optimization" (2006), algorithms 7.4 and 3.5–3.6;
    https://pytorch.org/docs/stable/generated/torch.optim.LBFGS.html
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None, *, maximize=False):
        _check_nonnegative(lr=lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size,
                        line_search_fn=line_search_fn, maximize=maximize)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def step(self, closure):
        """Runs up to ``max_iter`` L-BFGS iterations; returns the closure's first loss."""
        return super().step(closure)

    def _flat_grad(self, sign):
        parts = [p.new_zeros(p.numel())._data if p.grad is None else p.grad._data.reshape(-1)
                 for p in self._params]
        flat = namespace(*parts).concatenate(parts)
        return -flat if sign < 0 else flat

    def _add(self, step_size, direction):
        offset = 0
        for p in self._params:
            n = p.numel()
            p._data += step_size * direction[offset:offset + n].reshape(p._data.shape)
            p._versions[0] += 1
            offset += n

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        sign = -1 if group["maximize"] else 1

        def evaluate():
            with enable_grad():
                loss = closure()
            return loss, sign * float(loss), self._flat_grad(sign)

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss, loss, flat_grad = evaluate()
        current_evals = 1
        state["func_evals"] += 1
        if abs(flat_grad).max() <= tolerance_grad:
            return orig_loss
        saved = {k: _from_state(state.get(k)) for k in
                 ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss")}
        d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss = saved.values()

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, H_diag = -flat_grad, [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == group["history_size"]:
                        old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                # Two-loop recursion: d = −H g from the kept (y, s) pairs.
                al = [None] * group["history_size"]
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                d = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(d) * ro[i]
                    d = d + (al[i] - be_i) * old_stps[i]
                state["al"] = _to_state(al)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            evals = 0
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                start = [p._data.copy() for p in self._params]

                def along(step_size):
                    self._add(step_size, d)
                    _, value, grad = evaluate()
                    for p, x in zip(self._params, start):
                        p._data[...] = x
                    return value, grad

                loss, flat_grad, t, evals = _strong_wolfe(along, t, d, loss, flat_grad, gtd,
                                                          max_ls=max_eval - current_evals)
                self._add(t, d)
                optimal = abs(flat_grad).max() <= tolerance_grad
            else:
                self._add(t, d)
                optimal = False
                if n_iter != max_iter:
                    _, loss, flat_grad = evaluate()
                    optimal = abs(flat_grad).max() <= tolerance_grad
                    evals = 1
            current_evals += evals
            state["func_evals"] += evals
            if (n_iter == max_iter or current_evals >= max_eval or optimal
                    or abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change):
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        for key in ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad"):
            state[key] = _to_state(state[key])
        return orig_loss
