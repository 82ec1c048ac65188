"""Learning-rate schedulers (``torch.optim.lr_scheduler``).

A scheduler rewrites ``group["lr"]`` of its optimizer's parameter groups once per
``scheduler.step()``, called after ``optimizer.step()``. Most schedules here are *chainable*:
``get_lr`` computes the next rate from the current ``group["lr"]`` (a recursive form), so
several schedulers may act on one optimizer; ``step(epoch)`` uses the closed form where one
exists. Values follow PyTorch's recursive formulas, so they agree with it step for step.

Semantics follow https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate.
"""
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from functools import partial, wraps

from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "ExponentialLR", "SequentialLR", "PolynomialLR", "CosineAnnealingLR",
           "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts",
           "OneCycleLR"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")


def _lrs(optimizer):
    return [group["lr"] for group in optimizer.param_groups]


def _format_param(name, optimizer, param):
    """One value per parameter group: a scalar is repeated; a list must match the groups."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has "
                             f"{len(param)} values, param_groups has {len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _warn_outside_step(scheduler):
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use "
                      "`get_last_lr()`.", UserWarning, stacklevel=3)


def _track_optimizer_step(optimizer):
    """Wraps ``optimizer.step`` (once) to record that it ran, so ``scheduler.step()`` can warn
    when it is called first, which skips the first value of the schedule."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = weakref.ref(optimizer)
    func = optimizer.step.__func__

    @wraps(func)
    def wrapper(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return func.__get__(opt, opt.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


class LRScheduler:
    """Base class of the learning-rate schedulers.

    Subclasses define :meth:`get_lr` (the next rates, computed while :attr:`last_epoch` has
    just been advanced) and may define ``_get_closed_form_lr`` for ``step(epoch)``.

    Args:
        optimizer (Optimizer): the optimizer whose ``group["lr"]`` values are scheduled.
        last_epoch (int): index of the last epoch seen; -1 (default) starts a new schedule and
            records each group's ``initial_lr``. Another value resumes, and requires each group
            to have ``initial_lr`` already.

    Attributes:
        base_lrs (list[float]): each group's ``initial_lr``.
        last_epoch (int): the number of ``step()`` calls since the start (0 after construction).

    Raises:
        TypeError: ``optimizer`` is not an :class:`~ember.optim.Optimizer`.
        KeyError: resuming (``last_epoch != -1``) a group that has no ``initial_lr``.

    Example::

        >>> import ember
        >>> opt = ember.optim.SGD([ember.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = ember.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        >>> for epoch in range(4):
        ...     opt.step()
        ...     scheduler.step()
        ...     print(scheduler.get_last_lr())
        [1.0]
        [0.5]
        [0.5]
        [0.25]
    """
    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\nThis typically happens when:\n1. You're "
                        "trying to resume training from a checkpoint but haven't properly loaded the "
                        "optimizer state\n2. You're using last_epoch >= 0 for a fresh training run "
                        "(not recommended)")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _track_optimizer_step(optimizer)
        self._initial_step()

    def _initial_step(self):
        """Resets the step count and takes the first step, which sets the epoch-0 rates."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """Every attribute of the scheduler except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restores attributes saved by :meth:`state_dict`."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates (one per group) set by the most recent step."""
        return self._last_lr

    def get_lr(self):
        """The next learning rate of each group; subclasses define it."""
        raise NotImplementedError

    def step(self, epoch=None):
        """Advances the schedule one epoch and writes the new rates into the optimizer.

        Args:
            epoch (int, optional): deprecated; jumps to this epoch, using the closed form of
                the schedule where there is one.
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate "
                              "scheduler initialization. Please, make sure to call `optimizer.step()` "
                              "before `lr_scheduler.step()`. See more details at https://pytorch.org/"
                              "docs/stable/optim.html#how-to-adjust-learning-rate", UserWarning,
                              stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. In "
                              "PyTorch 1.1.0 and later, you should call them in the opposite order: "
                              "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                              "will result in PyTorch skipping the first value of the learning rate "
                              "schedule. See more details at https://pytorch.org/docs/stable/optim."
                              "html#how-to-adjust-learning-rate", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)


class _LRScheduler(LRScheduler):
    """The old name of :class:`LRScheduler`, kept for code that subclasses it."""


def _lambdas(optimizer, lr_lambda):
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
    return list(lr_lambda)


class _LambdaState:
    """state_dict support for schedulers holding ``lr_lambdas``: a callable object's
    ``__dict__`` is saved; plain functions and lambdas are not (they are saved as None)."""

    def state_dict(self):
        """The scheduler's state, as PyTorch's: its attributes but the optimizer, with ``lr_lambdas``
        saved where they are callable objects (plain functions and lambdas as None)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        """Restores :meth:`state_dict`'s state, and the callable objects' ``lr_lambdas`` state."""
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaState, LRScheduler):
    """Sets each group's rate to ``initial_lr * lr_lambda(epoch)``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        lr_lambda (callable or list): ``epoch -> factor``, or one such function per group.
        last_epoch (int): index of the last epoch. Default: -1.

    Raises:
        ValueError: a list of lambdas whose length differs from the number of groups.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.LambdaLR.html
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """Multiplies each group's rate by ``lr_lambda(epoch)`` at every step after the first.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        lr_lambda (callable or list): ``epoch -> factor``, or one such function per group.
        last_epoch (int): index of the last epoch. Default: -1.

    Raises:
        ValueError: a list of lambdas whose length differs from the number of groups.
        TypeError: a lambda that is not callable.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.MultiplicativeLR.html
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        if self._is_initial:
            return _lrs(self.optimizer)
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiplies the rate by ``gamma`` every ``step_size`` epochs:
    ``lr = initial_lr * gamma ** (epoch // step_size)``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        step_size (int): period of the decay, in epochs.
        gamma (float): multiplicative factor. Default: 0.1.
        last_epoch (int): index of the last epoch. Default: -1.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.StepLR.html
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies the rate by ``gamma`` at each milestone epoch (by ``gamma ** n`` for a
    milestone listed n times): ``lr = initial_lr * gamma ** (milestones passed)``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        milestones (iterable of int): epochs at which to decay, increasing.
        gamma (float): multiplicative factor. Default: 0.1.
        last_epoch (int): index of the last epoch. Default: -1.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.MultiStepLR.html
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        if self.last_epoch not in self.milestones:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scales the rate by ``factor`` for the first ``total_iters`` epochs, then restores it.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        factor (float): the scale, in [0, 1]. Default: 1/3.
        total_iters (int): number of epochs scaled. Default: 5.
        last_epoch (int): index of the last epoch. Default: -1.

    Raises:
        ValueError: ``factor`` outside [0, 1].

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.ConstantLR.html
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _lrs(self.optimizer)
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scales the rate by a factor moving linearly from ``start_factor`` to ``end_factor``
    over ``total_iters`` epochs:
    ``lr = initial_lr * (start + (end - start) * min(epoch, total_iters) / total_iters)``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        start_factor (float): factor at epoch 0, in (0, 1]. Default: 1/3.
        end_factor (float): factor from ``total_iters`` on, in [0, 1]. Default: 1.0.
        total_iters (int): length of the ramp in epochs. Default: 5.
        last_epoch (int): index of the last epoch. Default: -1.

    Raises:
        ValueError: a factor outside its range.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.LinearLR.html
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or "
                             "equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        # Ratio of consecutive factors f(e) / f(e - 1).
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies the rate by ``gamma`` every epoch: ``lr = initial_lr * gamma ** epoch``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        gamma (float): multiplicative factor.
        last_epoch (int): index of the last epoch. Default: -1.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.ExponentialLR.html
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        if self._is_initial:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


def _check_schedulers(owner, optimizer, schedulers):
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                             "additional kwargs to be specified when calling `step`, but got one at "
                             f"index {i} in the given schedulers sequence.")
        if optimizer is not scheduler.optimizer:
            raise ValueError(f"{owner} expects all schedulers to belong to the same optimizer, but got "
                             f"scheduler {scheduler.__class__.__name__} at index {i} has "
                             f"{scheduler.optimizer}, which is different from "
                             f"{optimizer.__class__.__name__}.")


class _Composite:
    """state_dict support for schedulers made of other schedulers (kept in ``_schedulers``)."""

    def state_dict(self):
        """The state of this scheduler and of each scheduler it is made of (``_schedulers``)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        """Restores :meth:`state_dict`'s state into this scheduler and the ones it is made of."""
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers
        for scheduler, saved in zip(self._schedulers, schedulers):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite, LRScheduler):
    """Runs ``schedulers`` one after another, switching at each of ``milestones``; at a switch
    the next scheduler starts from its epoch 0 (using its closed form).

    Args:
        optimizer (Optimizer): wrapped optimizer.
        schedulers (list): the schedulers, all on ``optimizer``.
        milestones (list of int): epochs at which to switch; one fewer than ``schedulers``.
        last_epoch (int): index of the last epoch. Default: -1.

    Raises:
        ValueError: no schedulers, a ReduceLROnPlateau, a scheduler on another optimizer, or
            a wrong number of milestones.
        TypeError: an entry with no ``optimizer`` attribute.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.SequentialLR.html
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler, but got no "
                             "scheduler.")
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more "
                             "than the number of milestone points, but got number of schedulers "
                             f"{len(schedulers)} and the number of milestones to be equal to "
                             f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Constructing each scheduler took a step; undo those so only the first one's counts.
        for group in self.optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None):
        """Steps back ``last_epoch`` of every (nested) scheduler by one."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class PolynomialLR(LRScheduler):
    """Decays the rate polynomially to zero over ``total_iters`` epochs:
    ``lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        total_iters (int): epochs until the rate reaches 0. Default: 5.
        power (float): power of the polynomial. Default: 1.0.
        last_epoch (int): index of the last epoch. Default: -1.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.PolynomialLR.html
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Cosine annealing from ``initial_lr`` to ``eta_min`` over ``T_max`` epochs (and back up
    over the next ``T_max``, periodically), computed recursively::

        η_t = η_min + (η_{t−1} − η_min) · (1 + cos(π t / T_max)) / (1 + cos(π (t − 1) / T_max))

    which tracks the closed form ``η_min + (η_max − η_min)(1 + cos(π t / T_max)) / 2`` while
    letting other schedulers change the rate too.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        T_max (int): half-period, in epochs.
        eta_min (float): minimum learning rate. Default: 0.
        last_epoch (int): index of the last epoch. Default: -1.

    Source: Loshchilov & Hutter, "SGDR: Stochastic Gradient Descent with Warm Restarts" (ICLR
    2017); https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.CosineAnnealingLR.html
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        if self._is_initial:
            return _lrs(self.optimizer)
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # At the bottom of a cycle the recursive ratio is 0/0; step up by the closed form's increment.
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        ratio = ((1 + math.cos(math.pi * self.last_epoch / self.T_max))
                 / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)))
        return [ratio * (group["lr"] - self.eta_min) + self.eta_min for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class ChainedScheduler(_Composite, LRScheduler):
    """Steps several chainable schedulers together, so their effects on the rate multiply.

    Args:
        schedulers (sequence): the schedulers, all on one optimizer.
        optimizer (Optimizer, optional): that optimizer; defaults to the first scheduler's.

    Raises:
        ValueError: no schedulers, a ReduceLROnPlateau, or schedulers on different optimizers.
        TypeError: an entry with no ``optimizer`` attribute.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.ChainedScheduler.html
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler to be chained, "
                             "but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _lrs(self._schedulers[-1].optimizer)

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _lrs(self._schedulers[-1].optimizer)


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the rate by ``factor`` when a metric has stopped improving for more than
    ``patience`` epochs; call ``step(metric)`` once per epoch.

    A value ``a`` improves on the best ``b`` when (``rel``) ``a < b (1 − threshold)`` in
    ``min`` mode or ``a > b (1 + threshold)`` in ``max`` mode, or (``abs``) ``a < b − threshold``
    / ``a > b + threshold``. After a reduction, ``cooldown`` epochs pass before bad epochs count
    again. A reduction smaller than ``eps`` is skipped, and no rate goes below ``min_lr``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        mode (str): ``"min"`` or ``"max"``. Default: ``"min"``.
        factor (float): multiplicative factor, < 1. Default: 0.1.
        patience (int): bad epochs tolerated before reducing. Default: 10.
        threshold (float): significance threshold of an improvement. Default: 1e-4.
        threshold_mode (str): ``"rel"`` or ``"abs"``. Default: ``"rel"``.
        cooldown (int): epochs to wait after a reduction. Default: 0.
        min_lr (float or list): lower bound on the rate, or one per group. Default: 0.
        eps (float): minimal applied decay. Default: 1e-8.

    Raises:
        ValueError: ``factor >= 1``, an unknown mode or threshold mode, or a ``min_lr`` list of
            the wrong length.
        TypeError: ``optimizer`` is not an Optimizer.

    Source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.ReduceLROnPlateau.html
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _lrs(self.optimizer)
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Records this epoch's ``metrics`` (a number or a one-element tensor) and reduces the
        rates if it is the ``patience + 1``-th bad epoch in a row."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _lrs(self.optimizer)

    def _reduce_lr(self, epoch):
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(self.optimizer.param_groups)}) "
                    f"differs from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually "
                    "due to a new param group being added to the optimizer. Please modify the `min_lrs` "
                    "field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        """Restores :meth:`state_dict`'s state and rebuilds the comparison that ``mode``,
        ``threshold`` and ``threshold_mode`` define (it is not saved)."""
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


def _set_momentum(group, use_beta1, momentum):
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _init_momentum(scheduler, optimizer, base_momentum, max_momentum, last_epoch):
    """For cycle_momentum: checks the optimizer has momentum (or Adam's beta1), and on a fresh
    start sets each group's momentum to its maximum; returns (base, max) per group."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    max_momentums = _format_param("max_momentum", optimizer, max_momentum)
    base_momentums = _format_param("base_momentum", optimizer, base_momentum)
    if last_epoch == -1:
        for m_momentum, b_momentum, group in zip(max_momentums, base_momentums, optimizer.param_groups):
            _set_momentum(group, scheduler.use_beta1, m_momentum)
            group["max_momentum"] = m_momentum
            group["base_momentum"] = b_momentum
    return base_momentums, max_momentums


class CyclicLR(LRScheduler):
    """Cycles the rate between ``base_lr`` and ``max_lr`` (triangular waves, stepped per batch),
    and the momentum inversely between ``max_momentum`` and ``base_momentum``.

    With ``cycle = floor(1 + t / (up + down))`` and ``x`` the position within the cycle, the
    rate is ``base_lr + (max_lr − base_lr) · s(x) · scale_fn(cycle or t)`` where ``s`` rises
    linearly over ``step_size_up`` steps and falls over ``step_size_down``. Modes:
    ``triangular`` (scale 1), ``triangular2`` (halved each cycle), ``exp_range`` (``gamma**t``).

    Args:
        optimizer (Optimizer): wrapped optimizer.
        base_lr (float or list): lower rate of the cycle, per group.
        max_lr (float or list): upper rate of the cycle, per group.
        step_size_up (int): steps in the rising half. Default: 2000.
        step_size_down (int, optional): steps in the falling half; defaults to ``step_size_up``.
        mode (str): ``"triangular"``, ``"triangular2"`` or ``"exp_range"``. Default: triangular.
        gamma (float): base of ``exp_range``. Default: 1.0.
        scale_fn (callable, optional): custom amplitude scaling, overriding ``mode``.
        scale_mode (str): ``"cycle"`` or ``"iterations"``: the argument of ``scale_fn``.
        cycle_momentum (bool): cycle momentum too. Default: True.
        base_momentum (float or list): lower momentum. Default: 0.8.
        max_momentum (float or list): upper momentum. Default: 0.9.
        last_epoch (int): index of the last batch. Default: -1.

    Raises:
        ValueError: an unknown mode without ``scale_fn``; ``cycle_momentum`` with an optimizer
            that has no momentum; per-group lists of the wrong length.

    Source: Smith, "Cyclical Learning Rates for Training Neural Networks" (WACV 2017);
    https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.CyclicLR.html
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _init_momentum(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """The amplitude scale at ``x`` (the cycle number or the iteration)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x):
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x):
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma, x):
        return gamma ** x

    def get_lr(self):
        _warn_outside_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        rise = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * rise * scale for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base_m, max_m in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, self.use_beta1, max_m - (max_m - base_m) * rise * scale)
        return lrs

    def state_dict(self):
        """The scheduler's state but the optimizer and the scale function, which is saved only as a
        callable object's ``__dict__`` (a plain function as None) and rebuilt from ``mode`` on load."""
        state = super().state_dict()
        # The bound scale function cannot be pickled; it is rebuilt from ``mode`` on load.
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (fn.__dict__.copy() if fn is not None
                                     and not isinstance(fn, types.FunctionType) else None)
        return state

    def load_state_dict(self, state_dict):
        """Restores :meth:`state_dict`'s state and rebuilds the scale function."""
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing with warm restarts::

        η = η_min + (η_max − η_min) (1 + cos(π T_cur / T_i)) / 2

    where ``T_cur`` counts epochs (possibly fractional) since the last restart and the period
    ``T_i`` starts at ``T_0`` and is multiplied by ``T_mult`` at every restart.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        T_0 (int): epochs until the first restart, positive.
        T_mult (int): growth factor of the period, >= 1. Default: 1.
        eta_min (float): minimum learning rate. Default: 0.
        last_epoch (int): index of the last epoch. Default: -1.

    Raises:
        ValueError: a non-positive or non-integer ``T_0``, ``T_mult < 1`` or non-integer, an
            ``eta_min`` that is not a number, or a negative epoch passed to ``step``.

    Source: Loshchilov & Hutter, "SGDR: Stochastic Gradient Descent with Warm Restarts" (ICLR
    2017); https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.CosineAnnealingWarmRestarts.html
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Advances one epoch, or jumps to ``epoch`` (which may be fractional, e.g.
        ``epoch + i / iters`` to anneal within an epoch)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    # n = number of completed periods T_0 (1 + T_mult + ... + T_mult^(n-1)) <= epoch.
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: the rate rises from ``max_lr / div_factor``
    to ``max_lr`` over the first ``pct_start`` of ``total_steps``, then anneals to
    ``initial_lr / final_div_factor``; momentum moves inversely between ``max_momentum`` and
    ``base_momentum``. With ``three_phase`` the rate comes back down to the initial rate
    symmetrically before the final annihilation phase.

    Each phase anneals from ``start`` to ``end`` with ``pct`` in [0, 1] by cosine,
    ``end + (start − end)(1 + cos(π pct)) / 2``, or linearly, ``start + (end − start) pct``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        max_lr (float or list): peak rate, per group.
        total_steps (int, optional): length of the cycle; else ``epochs * steps_per_epoch``.
        epochs (int, optional), steps_per_epoch (int, optional): see ``total_steps``.
        pct_start (float): fraction of the cycle spent rising. Default: 0.3.
        anneal_strategy (str): ``"cos"`` or ``"linear"``. Default: ``"cos"``.
        cycle_momentum (bool): cycle momentum (or Adam's beta1) too. Default: True.
        base_momentum (float or list): lower momentum. Default: 0.85.
        max_momentum (float or list): upper momentum. Default: 0.95.
        div_factor (float): ``initial_lr = max_lr / div_factor``. Default: 25.
        final_div_factor (float): ``min_lr = initial_lr / final_div_factor``. Default: 1e4.
        three_phase (bool): use the three-phase schedule. Default: False.
        last_epoch (int): index of the last batch. Default: -1.

    Raises:
        ValueError: missing or non-positive step counts, ``pct_start`` outside [0, 1] or not a
            float, an unknown anneal strategy, ``cycle_momentum`` without momentum, stepping
            past ``total_steps``.

    Source: Smith & Topin, "Super-Convergence: Very Fast Training of Neural Networks Using Large
    Learning Rates" (2018); https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.OneCycleLR.html
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

        # Each phase runs until step ``end_step``, moving between the named group entries.
        rise_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                _phase(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                _phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                _phase(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy

        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for max_lr_i, group in zip(max_lrs, self.optimizer.param_groups):
                group["initial_lr"] = max_lr_i / div_factor
                group["max_lr"] = max_lr_i
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _init_momentum(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self):
        _warn_outside_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]],
                                                     group[phase["end_momentum"]], pct)
                        _set_momentum(group, self.use_beta1, momentum)
                    break
                start_step = phase["end_step"]
        return lrs


def _phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
    return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
            "start_momentum": start_momentum, "end_momentum": end_momentum}
