"""ember.optim: optimizers and learning-rate schedulers (``torch.optim``).

Each optimizer subclasses :class:`Optimizer`, which owns parameter groups, per-parameter state
and ``state_dict``; the subclass holds only its update equations.
"""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .asgd import ASGD
from .rprop import Rprop
from .sparse_adam import SparseAdam
from .lbfgs import LBFGS
from .adafactor import Adafactor
from . import lr_scheduler, swa_utils

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
           "RAdam", "ASGD", "Rprop", "SparseAdam", "LBFGS", "Adafactor", "lr_scheduler",
           "swa_utils"]
