"""``repr(tensor)`` in PyTorch's format (the rules of torch/_tensor_str.py).

One formatter per tensor decides from the finite nonzero values (of the summarised part when
the tensor has more than ``threshold`` elements): integral floats print as ``1.``, a range
wider than 1000x or values beyond 1e8 or below 1e-4 switch to scientific notation, and every
element is right-aligned to the widest one. Rows wrap at ``linewidth``; long dimensions show
``edgeitems`` from each end around ``...``. Suffixes name a non-default dtype, the size of an
empty tensor, and ``grad_fn``/``requires_grad``.
"""
import math

import numpy as np

from . import _backend, _dtype
from ._backend.meta import MetaArray
from .autograd.grad_mode import DUAL

__all__ = ["tensor_repr", "set_printoptions"]

OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Sets how tensors print (``torch.set_printoptions``); ``sci_mode=None`` lets each tensor's
    values decide."""
    if profile is not None:
        OPTIONS.update(_PROFILES[profile])
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            OPTIONS[k] = v
    OPTIONS["sci_mode"] = sci_mode


class _Formatter:
    """Formats single elements of one tensor, all padded to the same width."""

    def __init__(self, data):
        self.floating = _backend.is_floating(data.dtype)
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            values = data.reshape(-1).tolist()
            self.width = max([1] + [len(str(v)) for v in values])
            return
        flat = data.reshape(-1).astype(np.float64)
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        mags = np.abs(vals)
        lo, hi = mags.min(), mags.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        sci = OPTIONS["sci_mode"]
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if sci is None else sci
        p = OPTIONS["precision"]
        if self.sci_mode:
            widths = (len(f"{v:.{p}e}") for v in vals.tolist())
        elif self.int_mode:
            widths = (len(f"{v:.0f}") + 1 for v in vals.tolist())
        else:
            widths = (len(f"{v:.{p}f}") for v in vals.tolist())
        self.width = max(widths)

    def __call__(self, value):
        if self.floating:
            p = OPTIONS["precision"]
            if self.sci_mode:
                text = f"{value:{self.width}.{p}e}"
            elif self.int_mode:
                text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
            else:
                text = f"{value:.{p}f}"
        else:
            text = str(value)
        return text.rjust(self.width)


class _ComplexFormatter:
    """Formats complex elements as ``real+imagj``, each part with a formatter of its own (as
    torch does), so the real parts align and the imaginary parts follow their sign."""

    def __init__(self, data):
        self.real, self.imag = _Formatter(data.real), _Formatter(data.imag)
        self.width = self.real.width + self.imag.width + 1

    def __call__(self, value):
        imag = (self.imag(value.imag) + "j").lstrip()
        return self.real(value.real) + (imag if imag[0] in "+-" else "+" + imag)


def _edges(data, edge):
    """The part of ``data`` that a summarised repr shows: ``edge`` items from each end of every
    dimension longer than ``2 * edge``."""
    for axis in range(data.ndim):
        n = data.shape[axis]
        if n > 2 * edge:
            keep = np.r_[0:edge, n - edge:n]
            data = np.take(data, keep, axis=axis)
    return data


def _vector(row, indent, summarize, fmt):
    edge = OPTIONS["edgeitems"]
    per_line = max(1, math.floor((OPTIONS["linewidth"] - indent) / (fmt.width + 2)))
    if summarize and row.shape[0] > 2 * edge:
        items = [fmt(v) for v in row[:edge].tolist()] + [" ..."] + [fmt(v) for v in row[-edge:].tolist()]
    else:
        items = [fmt(v) for v in row.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(data, indent, summarize, fmt):
    if data.ndim == 0:
        return fmt(data.item())
    if data.ndim == 1:
        return _vector(data, indent, summarize, fmt)
    edge, n = OPTIONS["edgeitems"], data.shape[0]
    if summarize and n > 2 * edge:
        rows = [_nested(data[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."] + \
               [_nested(data[i], indent + 1, summarize, fmt) for i in range(n - edge, n)]
    else:
        rows = [_nested(data[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _with_suffixes(text, suffixes, indent, newline=False):
    """``text`` and then ``suffixes``, wrapped at the line width (the first on a line of its own
    when ``newline``, as the sparse form puts it), and the closing parenthesis."""
    out = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if newline or last_line + len(s) + 2 > OPTIONS["linewidth"]:
            newline = False
            out.append(",\n" + " " * indent + s)
            last_line = indent + len(s)
        else:
            out.append(", " + s)
            last_line += len(s) + 2
    return "".join(out) + ")"


def _sparse_repr(t, prefix):
    """PyTorch's form: the indices and values as tensors, then size, nnz, dtype and layout."""
    data = t._data
    head = prefix + "indices="
    lines = [head + _indented(_plain(t._make(data.indices)), len(head)) + ","]
    pad = " " * len(prefix)
    lines.append(pad + "values=" + _indented(_plain(t._make(data.values)), len(pad) + 7))
    suffixes = [f"size={tuple(data.shape)}", f"nnz={data.nnz}"]
    if t.dtype not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool):
        suffixes.append(f"dtype={t.dtype!r}")
    suffixes.append(f"layout={t.layout!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes("\n".join(lines), suffixes, len(pad), newline=True)


def _plain(t):
    """An inner tensor of a sparse repr: no dtype (the outer repr names it), sizes of empties."""
    if t.numel() == 0:
        return f"tensor([], size={tuple(t.shape)})"
    return tensor_repr(t, dtype_shown=False)


def _indented(text, indent):
    return text.replace("\n", "\n" + " " * indent)


def tensor_repr(t, dtype_shown=True):
    """PyTorch's ``repr`` of ``t``, dtype names included (``dtype=torch.float16``)."""
    kind = type(t).__name__
    prefix = "tensor(" if kind in ("Tensor", "Parameter") else kind + "("
    indent = len(prefix)
    data = t._data
    if t.is_sparse:
        return _sparse_repr(t, prefix)
    suffixes = []
    if type(data) is MetaArray:  # no values to show: torch's "..." and where and what it is
        body = "..."
        suffixes += ["device='meta'", f"size={tuple(data.shape)}"]
        if t.dtype is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={t.dtype!r}")
    elif data.size == 0:
        body = "[]"
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if t.dtype is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={t.dtype!r}")
    else:
        default = _dtype.get_default_dtype()
        if dtype_shown and t.dtype not in (default, default.to_complex(), _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={t.dtype!r}")
        summarize = data.size > OPTIONS["threshold"]
        shown = _edges(data, OPTIONS["edgeitems"]) if summarize else data
        fmt = _ComplexFormatter(shown) if t.dtype.is_complex else _Formatter(shown)
        body = _nested(data, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    if DUAL.tangents is not None:
        tangent = DUAL.tangents.get(t)
        if tangent is not None:
            suffixes.append("tangent=" + tensor_repr(tangent))
    text = _with_suffixes(prefix + body, suffixes, indent)
    return "Parameter containing:\n" + text if kind == "Parameter" else text
