"""Stochastic weight averaging and exponential moving averages of a model
(``torch.optim.swa_utils``): :class:`AveragedModel`, the averaging functions, :class:`SWALR` and
:func:`update_bn`.

Source: Izmailov et al., "Averaging Weights Leads to Wider Optima and Better Generalization"
(UAI 2018); https://pytorch.org/docs/stable/optim.html#weight-averaging-swa-and-ema
"""
import itertools
import math
import warnings
from copy import deepcopy

from .._creation import tensor as _tensor
from .._dtype import long
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _is_float(tensor):
    return tensor.dtype.is_floating_point or tensor.dtype.is_complex


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA over lists of tensors, for ``AveragedModel(multi_avg_fn=...)``:
    ``ema ← lerp(ema, current, 1 − decay)`` (integer tensors: ``ema·decay + current·(1 − decay)``).

    Raises:
        ValueError: ``decay`` outside [0, 1].
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if _is_float(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean over lists of tensors, for ``AveragedModel(multi_avg_fn=...)``:
    ``avg ← avg + (current − avg) / (n + 1)`` with ``n`` the number already averaged."""
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
            if _is_float(averaged_param_list[0]):
                p_avg.lerp_(p_model, float(1 / (num_averaged + 1)))
            elif isinstance(num_averaged, Tensor):
                p_avg.addcdiv_(p_model - p_avg, num_averaged + 1)
            else:
                p_avg.add_(p_model - p_avg, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """A per-tensor EMA, for ``AveragedModel(avg_fn=...)``: returns
    ``decay·ema + (1 − decay)·current``.

    Raises:
        ValueError: ``decay`` outside [0, 1].
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """A per-tensor running mean, for ``AveragedModel(avg_fn=...)``: returns
    ``avg + (current − avg) / (n + 1)``."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) hold an average
    of ``model``'s over the calls to :meth:`update_parameters`: equal weights by default (SWA), or
    what ``avg_fn`` (per tensor) or ``multi_avg_fn`` (per list, in place) computes, e.g. an EMA.

    Args:
        model (Module): the model to average; deep-copied into :attr:`module`.
        device (optional): where the copy and ``n_averaged`` live.
        avg_fn (callable, optional): ``(averaged, current, n_averaged) -> new averaged``.
        multi_avg_fn (callable, optional): ``(averaged_list, current_list, n_averaged)``, in place.
        use_buffers (bool): average the buffers too (else they are copied). Default: False.

    Attributes: ``module`` (the averaged copy), ``n_averaged`` (0-d int64 buffer, also in the
    ``state_dict`` next to ``module.*``).

    Raises:
        AssertionError: both ``avg_fn`` and ``multi_avg_fn`` given.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.swa_utils.AveragedModel.html
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype=long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged_and_current(self, model):
        if self.use_buffers:
            return (itertools.chain(self.module.parameters(), self.module.buffers()),
                    itertools.chain(model.parameters(), model.buffers()))
        return self.parameters(), model.parameters()

    @no_grad()
    def update_parameters(self, model):
        """Folds ``model``'s current parameters into the average (the first call copies them)
        and copies its buffers (unless ``use_buffers``); then ``n_averaged += 1``."""
        averaged, current = [], []
        first = int(self.n_averaged) == 0
        for p_averaged, p_model in zip(*self._averaged_and_current(model)):
            p_model = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model)
            if first:
                averaged[-1].copy_(p_model)
        if not first and self.multi_avg_fn is not None:
            for key in dict.fromkeys((p.device, p.dtype) for p in averaged):
                pairs = [(a, c) for a, c in zip(averaged, current) if (a.device, a.dtype) == key]
                self.multi_avg_fn([a for a, _ in pairs], [c for _, c in pairs], self.n_averaged.to(key[0]))
        elif not first:  # torch's CPU path: the per-tensor function, a running mean by default
            avg_fn = self.avg_fn or get_swa_avg_fn()
            for p_averaged, p_model in zip(averaged, current, strict=True):
                p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged.to(p_averaged.device)))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recomputes the running statistics of ``model``'s batch-norm layers with one pass over
    ``loader`` (a cumulative average: momentum None during the pass); nothing happens when the
    model has none. An item of ``loader`` that is a list or tuple contributes its first element.

    Source: https://pytorch.org/docs/stable/optim.html#taking-care-of-batch-normalization
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps, then holds
    it. At step s, with t = min(1, s / anneal_epochs) and a(t) = t (``"linear"``) or
    (1 − cos(π t)) / 2 (``"cos"``): lr = a(t)·swa_lr + (1 − a(t))·lr₀, lr₀ recovered from the
    group's current lr (so other schedulers may act before it).

    Args:
        optimizer (Optimizer): the wrapped optimizer.
        swa_lr (float or list): the target rate, one for all groups or one per group.
        anneal_epochs (int): steps of the annealing. Default: 10.
        anneal_strategy (str): ``"cos"`` or ``"linear"``. Default: ``"cos"``.
        last_epoch (int): as in :class:`~ember.optim.lr_scheduler.LRScheduler`. Default: -1.

    Raises:
        ValueError: an unknown ``anneal_strategy``; ``anneal_epochs`` not an int ≥ 0; a list
            ``swa_lr`` whose length differs from the number of groups.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.swa_utils.SWALR.html
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for value, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """The next rate of each group (see the class docstring)."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        initial = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, initial, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """Every attribute except the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Restores :meth:`state_dict`'s attributes and the annealing function they name."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
