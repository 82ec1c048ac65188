"""The mlperf milestone's rows computed by PyTorch: the same trained weights in ``torch.nn``.

An ember ``nn.Sequential`` (the MLP, LeNet-5) is rebuilt layer by layer (:func:`torch_layer`);
the GPT is ``ember/models/gpt.py`` itself with its imports pointed at PyTorch
(:func:`ember.models.gpt.in_torch`), generating greedily with its KV cache (``torch eager``) or
through ``torch.compile`` of its static-cache decoding step
(:class:`ember.models.gpt.StaticKVDecoder`, ``torch.compile``), as ember's ``compiled`` row does
with ``ember.compile``. Inputs and outputs cross as zero-copy NumPy views; PyTorch runs on one
thread while measured.
"""
import functools
import inspect

import ember
from ember.models import gpt as ember_gpt

TORCH_EAGER, TORCH_COMPILED = "torch eager", "torch.compile"


class _InTorch:
    """A ``torch.nn`` model (or a PyTorch function of a tensor) called with ember tensors: the
    input crosses as a zero-copy NumPy view (further arguments as they are), the output comes
    back as one, computed under ``torch.no_grad`` on one thread."""

    def __init__(self, torch, model):
        self.torch, self.model = torch, model

    def __call__(self, x, *args):
        torch = self.torch
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.no_grad():
                return ember.from_numpy(self.model(torch.from_numpy(x.numpy()), *args).numpy())
        finally:
            torch.set_num_threads(threads)

    def state_dict(self):
        return self.model.state_dict()


def torch_layer(torch, layer):
    """``layer`` (an ember module without submodules) as the ``torch.nn`` module of the same
    name, built from the attributes its constructor names (``in_features``, ``kernel_size``,
    ``bias`` as present or not, ...) and holding copies of the same weights."""
    made_by = getattr(torch.nn, type(layer).__name__)
    arguments = {name: (getattr(layer, name) is not None) if name == "bias" else getattr(layer, name)
                 for name in inspect.signature(made_by).parameters
                 if name not in ("device", "dtype") and hasattr(layer, name)}
    made = made_by(**arguments)
    made.load_state_dict({key: torch.from_numpy(value.numpy().copy()) for key, value in layer.state_dict().items()})
    return made


def in_torch(compile_too=True):
    """``rows(model) -> {label: callable}``: an ember ``nn.Sequential`` rebuilt in PyTorch (see
    :func:`torch_layer`), or an ember GPT as PyTorch's GPT with its weights (see
    :func:`gpt_in_torch`), as ``torch eager`` and, with ``compile_too``, ``torch.compile`` rows.
    Without PyTorch, or for ``torch.compile`` in fast runs, a printed line says what is left out."""
    try:
        import torch
    except ImportError:
        print("mlperf: PyTorch is not installed: no torch eager or torch.compile rows")
        return lambda model: {}
    if not compile_too:
        print("mlperf: fast run: no torch.compile rows (inductor compiles for 10-60 s)")

    def rows(model):
        if isinstance(model, ember_gpt.GPT):
            return gpt_in_torch(torch, model, compile_too)
        copy_ = torch.nn.Sequential(*[torch_layer(torch, layer) for layer in model]).eval()
        made = {TORCH_EAGER: _InTorch(torch, copy_)}
        if compile_too:
            made[TORCH_COMPILED] = _InTorch(torch, torch.compile(copy_, dynamic=False))
        return made
    return rows


def gpt_in_torch(torch, model, compile_too=True):
    """Greedy generation ``generate(idx, max_new_tokens) -> (B, T + max_new_tokens)`` (ember
    tensors in and out) by PyTorch's copy of the GPT ``model``: ``torch eager`` its
    ``generate(..., top_k=1)`` with the KV cache and, with ``compile_too``, ``torch.compile``
    the static-cache decoder's step compiled by inductor (``dynamic=False``: a graph per batch
    size)."""
    gpt = ember_gpt.in_torch()
    twin = gpt.GPT(gpt.GPTConfig(**model.config.to_dict())).eval()
    twin.load_state_dict({key: torch.from_numpy(value.numpy().copy()) for key, value in model.state_dict().items()})
    made = {TORCH_EAGER: _InTorch(torch, functools.partial(twin.generate, top_k=1))}
    if compile_too:
        decoder = gpt.StaticKVDecoder(twin)
        made[TORCH_COMPILED] = _InTorch(torch, functools.partial(
            decoder.generate, decode=torch.compile(decoder.decode, dynamic=False)))
    return made
