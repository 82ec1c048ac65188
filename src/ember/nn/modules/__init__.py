"""Every layer class of ``ember.nn``, one concept per file as in ``torch/nn/modules``."""
from .module import Module
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear, LazyLinear
from .flatten import Flatten, Unflatten
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
from .activation import (
    ReLU, ReLU6, LeakyReLU, PReLU, RReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Softplus, Softsign,
    Sigmoid, Tanh, Hardtanh, Hardswish, Hardsigmoid, LogSigmoid, Tanhshrink, Softshrink,
    Hardshrink, Threshold, Softmax, LogSoftmax, Softmin, Softmax2d, GLU,
    MultiheadAttention,
)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .loss import (
    L1Loss, MSELoss, SmoothL1Loss, HuberLoss, CrossEntropyLoss, NLLLoss, NLLLoss2d, BCELoss,
    BCEWithLogitsLoss, KLDivLoss, SoftMarginLoss, MarginRankingLoss, HingeEmbeddingLoss,
    CosineEmbeddingLoss, TripletMarginLoss, TripletMarginWithDistanceLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, MultiLabelMarginLoss, GaussianNLLLoss,
    PoissonNLLLoss, CTCLoss,
)
from .conv import (
    Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, LazyConv1d, LazyConv2d,
    LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
)
from .pooling import (
    MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d, AdaptiveAvgPool2d,
    AdaptiveMaxPool1d, AdaptiveMaxPool2d, MaxUnpool1d, MaxUnpool2d, LPPool1d, LPPool2d,
    MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d, MaxUnpool3d, LPPool3d, FractionalMaxPool2d, FractionalMaxPool3d,
)
from .batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
                        SyncBatchNorm)
from .normalization import LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d
from .instancenorm import (
    InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from .padding import (
    ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
    ReplicationPad3d, CircularPad1d, CircularPad2d, CircularPad3d,
)
from .channelshuffle import ChannelShuffle
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from .fold import Fold, Unfold
from .sparse import Embedding, EmbeddingBag
from .transformer import (
    Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
    TransformerDecoderLayer,
)
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .distance import PairwiseDistance, CosineSimilarity

__all__ = [
    "Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "Dropout", "Dropout1d",
    "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "ReLU", "ReLU6",
    "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus",
    "Softsign", "Sigmoid", "Tanh", "Hardtanh", "Hardswish", "Hardsigmoid", "LogSigmoid",
    "Tanhshrink", "Softshrink", "Hardshrink", "Threshold", "Softmax", "LogSoftmax", "Softmin",
    "Softmax2d", "GLU", "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss",
    "NLLLoss", "NLLLoss2d", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "SoftMarginLoss",
    "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
    "MultiLabelMarginLoss", "GaussianNLLLoss", "PoissonNLLLoss", "CTCLoss", "AdaptiveLogSoftmaxWithLoss",
    "FractionalMaxPool2d", "FractionalMaxPool3d",
    "Conv1d", "Conv2d",
    "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "MaxUnpool1d", "MaxUnpool2d", "LPPool1d", "LPPool2d", "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "MaxUnpool3d", "LPPool3d", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d", "InstanceNorm1d",
    "InstanceNorm2d", "InstanceNorm3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d",
    "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
    "CircularPad2d", "CircularPad3d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "Upsample",
    "UpsamplingNearest2d", "UpsamplingBilinear2d", "Fold", "Unfold", "Embedding",
    "EmbeddingBag", "MultiheadAttention", "Transformer", "TransformerEncoder",
    "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer", "RNNBase",
    "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "PairwiseDistance",
    "CosineSimilarity", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
    "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "SyncBatchNorm", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
]
