"""``repr(tensor)`` in PyTorch's format (torch/_tensor_str.py's rules): 4 decimals, ``1.``
for integral floats, scientific notation for wide ranges, ``...`` above 1000 elements,
and ``dtype=``/``requires_grad=``/``grad_fn=`` suffixes."""
import numpy as np

from . import _dtype

__all__ = ["tensor_repr", "set_printoptions"]

OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Sets how tensors print (``torch.set_printoptions``)."""
    if profile == "default":
        OPTIONS.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "full":
        OPTIONS.update(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)
    elif profile == "short":
        OPTIONS.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            OPTIONS[k] = v
    OPTIONS["sci_mode"] = sci_mode


def _float_formatter(data):
    p = OPTIONS["precision"]
    finite = data[np.isfinite(data)].astype(np.float64)
    if finite.size == 0:
        fmt = str
    else:
        mags = np.abs(finite[finite != 0])
        integral = np.all(finite == np.ceil(finite))
        lo, hi = (mags.min(), mags.max()) if mags.size else (0.0, 0.0)
        sci = OPTIONS["sci_mode"]
        if integral:
            if sci is None:
                sci = hi > 1e8
            fmt = (lambda v: f"{v:.{p}e}") if sci else (lambda v: f"{v:.0f}.")
        else:
            if sci is None:
                sci = mags.size > 0 and (hi / lo > 1000.0 or hi > 1e8 or lo < 1e-4)
            fmt = (lambda v: f"{v:.{p}e}") if sci else (lambda v: f"{v:.{p}f}")

    def one(v):
        v = float(v)
        if np.isnan(v):
            return "nan"
        if np.isinf(v):
            return "inf" if v > 0 else "-inf"
        return fmt(v)
    return one


def _body(data):
    if data.dtype == np.bool_:
        one = lambda v: "True" if v else "False"  # noqa: E731
    elif data.dtype.kind in "iu":
        one = str
    else:
        one = _float_formatter(data)
    sample = _summary_sample(data)
    width = max((len(one(v)) for v in sample.reshape(-1)), default=0)
    return np.array2string(
        data, separator=", ", prefix="tensor(", max_line_width=OPTIONS["linewidth"],
        threshold=OPTIONS["threshold"], edgeitems=OPTIONS["edgeitems"],
        formatter={"all": lambda v: one(v).rjust(width)})


def _summary_sample(data):
    if data.size <= OPTIONS["threshold"]:
        return data
    e = OPTIONS["edgeitems"]
    for axis in range(data.ndim):
        if data.shape[axis] > 2 * e:
            data = np.concatenate([np.take(data, range(e), axis),
                                   np.take(data, range(data.shape[axis] - e, data.shape[axis]), axis)], axis)
    return data


def tensor_repr(t):
    data = t._data
    suffixes = []
    if data.size == 0:
        body = "[]"
        if data.shape != (0,):
            suffixes.append(f"size={tuple(data.shape)}")
    else:
        body = _body(data)
    implied = (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool)
    if t.dtype not in implied:
        suffixes.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    prefix = "Parameter containing:\ntensor(" if type(t).__name__ == "Parameter" else "tensor("
    return prefix + body + "".join(", " + s for s in suffixes) + ")"
