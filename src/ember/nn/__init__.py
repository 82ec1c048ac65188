"""``ember.nn``: modules, parameters, functional forms, initialisation and utilities
(PyTorch's ``torch.nn``, https://pytorch.org/docs/stable/nn.html)."""
from . import attention, functional, init, modules, parameter, utils
# After modules (which they use): torch.nn.utils.parametrizations works without its own import.
from .utils import parametrizations, parametrize  # noqa: F401
from .modules import (
    Module, Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, Identity, Linear,
    Bilinear, Flatten, Unflatten, Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout,
    FeatureAlphaDropout, ReLU, ReLU6, LeakyReLU, PReLU, RReLU, ELU, SELU, CELU, GELU, SiLU,
    Mish, Softplus, Softsign, Sigmoid, Tanh, Hardtanh, Hardswish, Hardsigmoid, LogSigmoid,
    Tanhshrink, Softshrink, Hardshrink, Threshold, Softmax, LogSoftmax, Softmin, Softmax2d, GLU,
    L1Loss, MSELoss, SmoothL1Loss, HuberLoss, CrossEntropyLoss, NLLLoss, NLLLoss2d, BCELoss,
    BCEWithLogitsLoss, KLDivLoss, SoftMarginLoss, MarginRankingLoss, HingeEmbeddingLoss,
    CosineEmbeddingLoss, TripletMarginLoss, TripletMarginWithDistanceLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, MultiLabelMarginLoss, GaussianNLLLoss,
    PoissonNLLLoss, CTCLoss, AdaptiveLogSoftmaxWithLoss, FractionalMaxPool2d,
    Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, MaxPool1d, MaxPool2d,
    AvgPool1d, AvgPool2d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d,
    AdaptiveMaxPool2d, MaxUnpool1d, MaxUnpool2d, LPPool1d, LPPool2d, Conv3d, ConvTranspose3d, MaxPool3d,
    AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d, MaxUnpool3d, LPPool3d, BatchNorm1d, BatchNorm2d,
    BatchNorm3d, LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d, InstanceNorm1d,
    InstanceNorm2d, InstanceNorm3d, ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d,
    ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
    ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, CircularPad1d, CircularPad2d,
    CircularPad3d, PixelShuffle, PixelUnshuffle, ChannelShuffle, Upsample, UpsamplingNearest2d,
    UpsamplingBilinear2d, Fold, Unfold, Embedding, EmbeddingBag, MultiheadAttention,
    Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
    TransformerDecoderLayer, RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell,
    PairwiseDistance, CosineSimilarity, LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d,
    LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d,
    LazyInstanceNorm2d, LazyInstanceNorm3d, SyncBatchNorm, FractionalMaxPool3d,
)
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = [
    "Parameter", "Buffer", "attention", "functional", "init", "utils", "Module", "Container", "Sequential", "ModuleList",
    "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear", "Bilinear", "Flatten",
    "Unflatten", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
    "FeatureAlphaDropout", "ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU",
    "CELU", "GELU", "SiLU", "Mish", "Softplus", "Softsign", "Sigmoid", "Tanh", "Hardtanh",
    "Hardswish", "Hardsigmoid", "LogSigmoid", "Tanhshrink", "Softshrink", "Hardshrink",
    "Threshold", "Softmax", "LogSoftmax", "Softmin", "Softmax2d", "GLU", "L1Loss", "MSELoss",
    "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "NLLLoss2d", "BCELoss", "BCEWithLogitsLoss",
    "KLDivLoss", "SoftMarginLoss", "MarginRankingLoss", "HingeEmbeddingLoss",
    "CosineEmbeddingLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss", "GaussianNLLLoss",
    "PoissonNLLLoss", "CTCLoss", "AdaptiveLogSoftmaxWithLoss", "FractionalMaxPool2d",
    "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d",
    "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "MaxUnpool1d", "MaxUnpool2d", "LPPool1d",
    "LPPool2d", "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool3d", "MaxUnpool3d", "LPPool3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
    "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
    "Fold", "Unfold", "Embedding", "EmbeddingBag", "MultiheadAttention", "Transformer",
    "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell",
    "LSTMCell", "GRUCell", "PairwiseDistance", "CosineSimilarity", "LazyLinear", "LazyConv1d", "LazyConv2d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "SyncBatchNorm", "FractionalMaxPool3d",
    "UninitializedParameter", "UninitializedBuffer",
]


def __getattr__(name):  # nn.parallel sits on ember.distributed, a layer above: load it on first use
    if name in ("parallel", "DataParallel"):
        import importlib
        parallel = importlib.import_module(".parallel", __name__)
        return parallel if name == "parallel" else parallel.DataParallel
    raise AttributeError(f"module 'ember.nn' has no attribute {name!r}")
