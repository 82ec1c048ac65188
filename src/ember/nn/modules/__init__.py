"""Every layer class of ``ember.nn``, one concept per file as in ``torch/nn/modules``."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear
from .flatten import Flatten, Unflatten
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
# These files grow independently; each one's ``__all__`` is the contract.
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from . import (activation as _activation, loss as _loss, conv as _conv, pooling as _pooling,
               batchnorm as _batchnorm, normalization as _normalization,
               instancenorm as _instancenorm, padding as _padding, pixelshuffle as _pixelshuffle,
               upsampling as _upsampling, fold as _fold, sparse as _sparse,
               attention as _attention, transformer as _transformer, rnn as _rnn,
               distance as _distance)

_GROWING = (_activation, _loss, _conv, _pooling, _batchnorm, _normalization, _instancenorm,
            _padding, _pixelshuffle, _upsampling, _fold, _sparse, _attention, _transformer, _rnn,
            _distance)

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "Dropout", "Dropout1d",
           "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
           *(name for m in _GROWING for name in m.__all__)]
