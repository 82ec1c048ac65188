"""``quantize_dynamic``: swap float modules for dynamically quantized ones
(``torch.ao.quantization.quantize_dynamic``,
https://pytorch.org/docs/stable/generated/torch.ao.quantization.quantize_dynamic.html)."""
import copy
import itertools
import warnings

from ... import nn
from ..._dtype import float16, float32
from ..nn.quantized import dynamic as nnqd
from .observer import PlaceholderObserver
from .qconfig import QConfig, default_dynamic_qconfig, float16_dynamic_qconfig
from .qtensor import qint8, quint8

__all__ = ["quantize_dynamic", "get_default_dynamic_quant_module_mappings", "propagate_qconfig_",
           "convert"]


def get_default_dynamic_quant_module_mappings():
    """Float module class -> dynamically quantized class. Matching is by exact type, so
    subclasses (such as MultiheadAttention's ``NonDynamicallyQuantizableLinear``) stay float."""
    return {nn.Linear: nnqd.Linear, nn.LSTM: nnqd.LSTM, nn.GRU: nnqd.GRU, nn.LSTMCell: nnqd.LSTMCell,
            nn.GRUCell: nnqd.GRUCell, nn.RNNCell: nnqd.RNNCell}


# The types quantize_dynamic quantizes by default (for qint8 and float16), as in PyTorch.
_DEFAULT_TYPES = (nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.RNNCell, nn.GRUCell)

# Stands for PyTorch's float_qparams_weight_only_qconfig, the weight-only quint8 quantization
# it applies to Embedding and EmbeddingBag. ember has neither that qscheme nor quantized
# embeddings, so this only carries the weight dtype: the modules ember can quantize reject it
# in from_float (Linear with AssertionError, the recurrent ones with RuntimeError), as PyTorch's do.
_quint8_weight_only_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=float32),
                                      weight=PlaceholderObserver.with_args(dtype=quint8))


def propagate_qconfig_(module, qconfig_dict=None):
    """Sets ``qconfig`` on ``module`` and every submodule: the entry for its qualified name in
    ``qconfig_dict``, else the entry for its type, else its parent's; an existing ``qconfig``
    attribute wins."""
    qconfig_dict = qconfig_dict or {}

    def visit(mod, parent_qconfig, prefix):
        qconfig = qconfig_dict.get(type(mod), parent_qconfig)
        qconfig = qconfig_dict.get(prefix, qconfig)
        qconfig = getattr(mod, "qconfig", qconfig)
        mod.qconfig = qconfig
        for name, child in mod.named_children():
            visit(child, qconfig, f"{prefix}.{name}" if prefix else name)

    visit(module, None, "")


def convert(module, mapping=None, inplace=False, remove_qconfig=True):
    """Replaces every submodule whose type is in ``mapping`` and whose ``qconfig`` is set by
    ``mapping[type].from_float(submodule)``; the quantized ones are not visited again. Returns
    the module (a deep copy unless ``inplace``)."""
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)

    def swap(mod):
        for name, child in mod.named_children():
            if getattr(child, "qconfig", None) is not None and type(child) in mapping:
                setattr(mod, name, mapping[type(child)].from_float(child))
            else:
                swap(child)

    swap(module)
    if remove_qconfig:
        for mod in module.modules():
            mod.__dict__.pop("qconfig", None)
    return module


def quantize_dynamic(model, qconfig_spec=None, dtype=qint8, mapping=None, inplace=False):
    """Replaces float submodules by dynamically quantized ones: weights are quantized now,
    activations (in PyTorch) at run time.

    Args:
        model: an ember.nn.Module (the top module itself is never swapped, as in PyTorch).
        qconfig_spec: which submodules to quantize. None: every ``nn.Linear``, ``nn.LSTM``,
            ``nn.GRU``, ``nn.LSTMCell``, ``nn.GRUCell`` and ``nn.RNNCell`` (for ember.quint8:
            ``nn.Embedding`` and ``nn.EmbeddingBag``). A set of types and/or
            qualified submodule names: those, with the default qconfig of ``dtype``. A dict
            from type or name to a :class:`QConfig` (e.g.
            ``{nn.Linear: per_channel_dynamic_qconfig}`` for one scale per output row).
            A name or container type covers the modules inside it.
        dtype: ember.qint8 (int8 weights, symmetric per-tensor scale) or ember.float16.
            ember.quint8 selects PyTorch's weight-only Embedding quantization, which ember does
            not have: embeddings stay float (with a UserWarning when the model holds one), and
            a Linear, LSTM, GRU or cell selected by the spec raises as in PyTorch
            (AssertionError for Linear, RuntimeError for the recurrent modules, naming the
            dtype).
        mapping: float type -> quantized type (default
            :func:`get_default_dynamic_quant_module_mappings`).
        inplace: modify ``model`` instead of a deep copy.

    Returns the quantized model, in eval mode. Modules of types without a dynamic version are
    left unchanged; when ``qconfig_spec`` names such a type (and the model holds one as a leaf
    module) a UserWarning names it. Raises ValueError (``qconfig_spec=None``) or RuntimeError (a
    set) for any other dtype, as PyTorch does.

    The quantized modules live on the CPU, as PyTorch's dynamic ones (fbgemm/qnnpack) do.

    Storage: a quantized Linear keeps int8 integers ``_packed_params.qweight`` (1 byte each)
    and a float64 scale, so the bytes of the state_dict,
    ``sum(t.numel() * t.element_size() for t in model.state_dict().values())``, and the size of
    the ``ember.save`` file drop to about a quarter of the float32 model's.

    Example::

        >>> import ember
        >>> from ember import nn
        >>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
        >>> ember.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=ember.qint8)
        Sequential(
          (0): DynamicQuantizedLinear(in_features=4, out_features=3, dtype=torch.qint8, qscheme=torch.per_tensor_affine)
          (1): ReLU()
        )
    """
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if qconfig_spec is None:
        if dtype is qint8:
            qconfig_spec = dict.fromkeys(_DEFAULT_TYPES, default_dynamic_qconfig)
        elif dtype is float16:
            qconfig_spec = dict.fromkeys(_DEFAULT_TYPES, float16_dynamic_qconfig)
        elif dtype is quint8:
            qconfig_spec = dict.fromkeys((nn.EmbeddingBag, nn.Embedding), _quint8_weight_only_qconfig)
        else:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. "
                             "Provide full qconfig please")
    elif isinstance(qconfig_spec, set):
        if dtype is qint8:
            default_qconfig = default_dynamic_qconfig
        elif dtype is float16:
            default_qconfig = float16_dynamic_qconfig
        elif dtype is quint8:
            default_qconfig = _quint8_weight_only_qconfig
        else:
            raise RuntimeError(f"Unknown dtype specified for quantize_dynamic: {dtype}")
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(default_qconfig)))
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    _warn_unsupported(model, qconfig_spec, mapping)
    propagate_qconfig_(model, qconfig_spec)
    return convert(model, mapping, inplace=True)


def _warn_unsupported(model, qconfig_spec, mapping):
    leaves = {type(m) for m in model.modules() if not m._modules}
    for key in qconfig_spec:
        if isinstance(key, type) and key in leaves and key not in mapping:
            warnings.warn(f"quantize_dynamic: ember has no dynamically quantized version of "
                          f"{key.__name__}; those modules are left unchanged", stacklevel=3)
