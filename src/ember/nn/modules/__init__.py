"""Every layer class of ``ember.nn``, one concept per file as in ``torch/nn/modules``."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear
from .flatten import Flatten, Unflatten
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
# activation.py and loss.py grow independently; their ``__all__`` is the contract.
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from . import activation as _activation, loss as _loss

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "Dropout", "Dropout1d",
           "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
           *_activation.__all__, *_loss.__all__]
