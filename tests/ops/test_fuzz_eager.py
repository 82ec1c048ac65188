"""A differential fuzzer of eager ember against torch 2.13: random calls over the public op
surface, each one a standalone program (printed on failure: paste it after ``import torch`` or
``import ember as torch`` to reproduce).

A case is drawn from its seed: a family (pointwise unary, binary with broadcasting and type
promotion against tensors and Python scalars, reductions with dim/keepdim/dtype, shape and view
ops, getitem/setitem, in-place writes through views), operands of random shape (empty and 0-d
ones too), dtype (bool, uint8, int8, int32, int64, float16, bfloat16, float32, float64,
complex64) and layout (contiguous, transposed, stepped, offset, expanded), some holding edge
values (nan, +-inf, -0.0, the dtype's largest and smallest). Float64 cases also take gradients
and, for some, second gradients (``create_graph=True``).

What must match torch: the exception's builtin class when torch raises (ember must raise too:
never a silent number), else the structure of the result, each tensor's shape, dtype and
requires_grad, strides for view ops (torch guarantees them), and values: integers and booleans
exactly; floats with the same nan and +-inf positions and the rest within a bound per dtype
(``TOL``). float32 results of transcendental functions are compared with torch's float64 result
of the same inputs rounded to float32 (``ORACLE_TOL``, about 30 float32 ulp: CPUs differ in
their float32 kernels, never the float64 ones). Gradients: None and zeros are the same.

The default suite runs a fixed handful of cases (seconds); ``EMBER_FUZZ_EAGER=N`` runs N more
from ``EMBER_FUZZ_EAGER_SEED`` (default 100000) and prints a table of failures by family:
``EMBER_FUZZ_EAGER=20000 pytest -q tests/ops/test_fuzz_eager.py -k long``.
"""
import collections
import os
import warnings

import numpy as np
import pytest
import torch

import ember

nan, inf = float("nan"), float("inf")
DTYPES = ("bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64")
WEIGHTS = np.array([1, 1, 1, 1, 3, 1, 1, 4, 4, 1], dtype=float)
FLOAT = ("float16", "bfloat16", "float32", "float64")
# (rtol, atol relative to the largest finite magnitude of torch's result)
TOL = {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 8e-3), "float32": (1e-5, 1e-6),
       "float64": (1e-12, 1e-13), "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-13)}
ORACLE_TOL = (4e-6, 1e-7)
# float64 transcendental results: torch's own float64 trigamma (digamma's and lgamma's
# derivatives) is off by up to ~5e-10 relative to SciPy's; ember's matches SciPy's.
SPECIAL_TOL64 = (2e-9, 1e-12)

TRANSCENDENTAL = ("exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan",
                  "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid",
                  "erf", "erfc", "erfinv", "exp2", "lgamma", "digamma", "logit", "sinc", "reciprocal")
EXACT = ("neg", "abs", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "relu", "square",
         "signbit", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "nan_to_num", "bitwise_not",
         "logical_not", "positive", "deg2rad", "rad2deg", "angle", "conj", "isreal")
ACTIVATIONS = ("F.gelu({a})", "F.gelu({a}, approximate='tanh')", "F.silu({a})", "F.softplus({a})",
               "F.softplus({a}, beta=2.0, threshold=1.0)", "F.elu({a})", "F.selu({a})", "F.celu({a}, 0.5)",
               "F.leaky_relu({a}, 0.1)", "F.hardtanh({a})", "F.relu6({a})", "F.hardswish({a})",
               "F.hardsigmoid({a})", "F.mish({a})", "F.logsigmoid({a})", "F.softsign({a})",
               "F.tanhshrink({a})", "F.softshrink({a}, 0.5)", "F.hardshrink({a}, 0.5)",
               "torch.clamp({a}, -1.5, 2.0)", "{a}.clamp(min=0.25)", "{a}.clamp(max=-1)",
               "torch.round({a}, decimals=1)", "{a}.pow(2)", "{a} ** 0.5", "{a} ** -1", "torch.logit({a}, eps=0.1)")
BINARY = ("torch.add({a}, {b})", "torch.sub({a}, {b})", "torch.mul({a}, {b})", "torch.div({a}, {b})",
          "torch.floor_divide({a}, {b})", "torch.remainder({a}, {b})", "torch.fmod({a}, {b})",
          "torch.pow({a}, {b})", "torch.atan2({a}, {b})", "torch.hypot({a}, {b})", "torch.maximum({a}, {b})",
          "torch.minimum({a}, {b})", "torch.fmax({a}, {b})", "torch.fmin({a}, {b})", "torch.eq({a}, {b})",
          "torch.lt({a}, {b})", "torch.ge({a}, {b})", "torch.logical_and({a}, {b})",
          "torch.logical_xor({a}, {b})", "torch.bitwise_and({a}, {b})", "torch.bitwise_or({a}, {b})",
          "torch.bitwise_xor({a}, {b})", "torch.copysign({a}, {b})", "torch.logaddexp({a}, {b})",
          "torch.xlogy({a}, {b})", "torch.div({a}, {b}, rounding_mode='floor')",
          "torch.div({a}, {b}, rounding_mode='trunc')", "torch.add({a}, {b}, alpha=2)",
          "torch.sub({a}, {b}, alpha=0.5)", "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}",
          "{a} // {b}", "{a} % {b}", "{a} ** {b}", "{a} & {b}", "{a} | {b}", "{a} ^ {b}", "{a} < {b}",
          "{a} == {b}", "{a} != {b}", "{a} >= {b}", "{a} << {b}", "{a} >> {b}", "torch.heaviside({a}, {b})",
          "torch.where({a} > 0, {a}, {b})", "torch.lerp({a}, {b}, 0.25)", "torch.nextafter({a}, {b})")
INPLACE_BINARY = ("add_", "sub_", "mul_", "div_", "pow_", "remainder_", "floor_divide_", "clamp_min_",
                  "maximum", "copy_", "masked_fill_", "fmod_", "bitwise_and_", "lerp_")
REDUCTIONS = ("sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "std", "var",
              "logsumexp", "all", "any", "nansum", "nanmean", "median", "norm", "count_nonzero",
              "cumsum", "cumprod", "std_mean", "var_mean", "aminmax", "softmax", "log_softmax",
              "cummax", "logcumsumexp", "mode", "nanmedian")
# ops whose result is a view of their input: torch fixes its strides
VIEWS = ("view", "reshape", "transpose", "permute", "squeeze", "unsqueeze", "expand", "narrow", "select",
         "split", "chunk", "unbind", "movedim", "t", "diagonal", "unfold", "flatten", "unflatten", "mT",
         "swapaxes", "as_strided", "view_as", "expand_as", "getitem")
EDGE = {"float16": (nan, inf, -inf, -0.0, 65504.0, 2.0 ** -14, 2.0 ** -24),
        "bfloat16": (nan, inf, -inf, -0.0, 2.0 ** 127, 2.0 ** -126),
        "float32": (nan, inf, -inf, -0.0, float(np.finfo(np.float32).max), 2.0 ** -126, 2.0 ** -149),
        "float64": (nan, inf, -inf, -0.0, 1e300, 2.0 ** -1022, 5e-324)}
SCALARS = (0, 1, -1, 2, 3, -3, 300, 2 ** 40, 0.0, -0.0, 1.5, -0.5, 2.5, nan, inf, -inf, True, False, 1 + 2j)


class Case:
    """A random call: source lines that leave ``result``; ``family`` and ``op`` name it for
    triage, ``views`` compares strides, ``oracle`` compares float32 values with torch's float64."""

    def __init__(self, seed):
        self.seed, self.rng = seed, np.random.default_rng(seed)
        self.lines, self.leaves, self.views, self.oracle = [], [], False, False
        self.grad = self.rng.random() < 0.35
        self.family = str(self.rng.choice(["unary", "binary", "reduce", "shapes", "index", "inplace"],
                                          p=[0.2, 0.24, 0.18, 0.16, 0.12, 0.1]))
        getattr(self, "_" + self.family)()
        if self.grad and self.leaves:
            self._gradients(self.rng.random() < 0.5)

    # ---------------------------------------------------------------- inputs
    def _dtype(self):
        if self.grad:
            return "float64"
        return str(self.rng.choice(DTYPES, p=WEIGHTS / WEIGHTS.sum()))

    def _shape(self, max_nd=3):
        nd = int(self.rng.integers(0, max_nd + 1))
        sizes = (0, 1, 2, 3, 4) if self.rng.random() < 0.1 else (1, 2, 3, 4)
        return tuple(int(self.rng.choice(sizes)) for _ in range(nd))

    def _partner(self, shape):
        """A shape that broadcasts with ``shape``."""
        rng = self.rng
        out = [1 if rng.random() < 0.3 else n for n in shape]
        if rng.random() < 0.3:
            out = out[rng.integers(0, len(out) + 1):]
        elif rng.random() < 0.1:
            out = [2] + out if all(n == 1 for n in out) else [1] + out
        return tuple(out)

    def _values(self, shape, dtype):
        rng, n = self.rng, int(np.prod(shape))
        if dtype == "bool":
            return rng.random(shape) < 0.5
        if dtype.startswith(("int", "uint")):
            info = np.iinfo(dtype)
            v = rng.integers(max(info.min, -6), min(info.max, 7), shape)
            if rng.random() < 0.2 and n:
                v.reshape(-1)[rng.integers(0, n)] = rng.choice([info.min, info.max])
            return v
        v = rng.integers(-24, 25, shape) / 8.0
        if dtype.startswith("complex"):
            return v + 1j * (rng.integers(-24, 25, shape) / 8.0)
        if rng.random() < 0.3 and n:
            picks = rng.integers(0, n, min(n, 3))
            v.reshape(-1)[picks] = rng.choice(EDGE[dtype], len(picks))
        return v

    def tensor(self, shape=None, dtype=None, layout=None, writable=False):
        """Adds lines making a tensor input; returns the expression naming it."""
        rng = self.rng
        shape = self._shape() if shape is None else tuple(shape)
        dtype = dtype or self._dtype()
        kinds = ["contiguous"] + (["transposed"] if len(shape) >= 2 else []) + \
            (["stepped", "offset"] if shape else []) + (["expanded"] if shape and not writable else [])
        layout = layout or str(rng.choice(kinds))
        leaf = list(shape)
        if layout == "transposed":
            leaf[-1], leaf[-2] = leaf[-2], leaf[-1]
        elif layout == "stepped":
            leaf[0] = 2 * leaf[0]
        elif layout == "offset":
            leaf[-1] += 1
        elif layout == "expanded":
            leaf = [1 if rng.random() < 0.5 else n for n in leaf]
        values = self._values(tuple(leaf), dtype)
        grad = self.grad and dtype in FLOAT
        rg = ", requires_grad=True" if grad else ""
        name = f"x{len(self.leaves)}"
        if values.size:
            self.lines.append(f"{name} = torch.tensor({values.tolist()!r}, dtype=torch.{dtype}{rg})")
        else:
            self.lines.append(f"{name} = torch.empty({tuple(leaf)}, dtype=torch.{dtype}{rg})")
        self.leaves.append((name, grad))
        view = {"contiguous": "", "transposed": ".transpose(-1, -2)", "stepped": "[::2]",
                "offset": "[..., 1:]", "expanded": f".expand({shape})"}[layout]
        return name + view

    def scalar(self):
        return repr(self.rng.choice(np.array(SCALARS, dtype=object)))

    def _dim(self, nd, allow_none=True):
        rng = self.rng
        if nd == 0:
            return str(rng.choice(["0", "-1", "None"] if allow_none else ["0", "-1"]))
        roll = rng.random()
        if allow_none and roll < 0.15:
            return "None"
        if allow_none and roll < 0.3:
            k = int(rng.integers(0, nd + 1))
            return repr(tuple(int(d) for d in rng.choice(nd, k, replace=False)))
        return str(int(rng.integers(-nd, nd)))

    # ---------------------------------------------------------------- families
    def _unary(self):
        rng = self.rng
        a = self.tensor()
        roll = rng.random()
        if roll < 0.45:
            self.op = str(rng.choice(TRANSCENDENTAL))
            self.oracle = True
            form = rng.random()
            expr = f"torch.{self.op}({a})" if form < 0.6 else f"{a}.{self.op}()" if form < 0.9 \
                else f"{a}.clone().{self.op}_()"
        elif roll < 0.75:
            self.op = str(rng.choice(EXACT))
            expr = f"torch.{self.op}({a})" if rng.random() < 0.7 else f"{a}.{self.op}()"
        else:
            template = str(rng.choice(ACTIVATIONS))
            self.op = template.split("(")[0].replace("{a}", "") + ("~" if "," in template else "")
            self.oracle = True
            expr = template.format(a=a)
        self.lines.append(f"result = {expr}")

    def _operand(self, shape):
        return self.scalar() if self.rng.random() < 0.3 else self.tensor(self._partner(shape))

    def _binary(self):
        rng = self.rng
        shape = self._shape()
        template = str(rng.choice(BINARY))
        self.op = template.replace("{a}", "a").replace("{b}", "b")
        a = self.tensor(shape)
        b = self._operand(shape)
        if rng.random() < 0.15 and not template.startswith("torch.where"):
            a, b = b, a  # a Python scalar on the left
        self.oracle = any(f in template for f in ("atan2", "hypot", "logaddexp", "xlogy", "pow", "**"))
        self.lines.append(f"result = {template.format(a=a, b=b)}")

    def _reduce(self):
        rng = self.rng
        shape = self._shape()
        op = str(rng.choice(REDUCTIONS))
        # torch 2.13's median/nanmedian/mode read garbage from expanded (stride-0) inputs
        a = self.tensor(shape, layout="contiguous" if op in ("median", "nanmedian", "mode") else None)
        self.op = op
        nd = len(shape)
        single = op in ("argmax", "argmin", "median", "cumsum", "cumprod", "softmax", "log_softmax", "cummax",
                        "logcumsumexp", "mode", "nanmedian", "max", "min")
        dim = self._dim(nd, allow_none=not single or op in ("argmax", "argmin", "max", "min", "median",
                                                            "nanmedian"))
        if dim == "()" and op in ("var", "std", "var_mean", "std_mean"):
            dim = "None"  # torch 2.13: the value reduces all dims, the gradient none (inf)
        args = []
        if op in ("cumsum", "cumprod", "softmax", "log_softmax", "cummax", "logcumsumexp", "logsumexp"):
            args.append(f"{dim if dim != 'None' else 0}")
        elif dim != "None" or rng.random() < 0.5:
            args.append(f"dim={dim}")
        if op not in ("cumsum", "cumprod", "softmax", "log_softmax", "cummax", "logcumsumexp") \
                and dim != "None" and rng.random() < 0.5:
            args.append(f"keepdim={bool(rng.random() < 0.5)}")
        if op in ("sum", "mean", "prod", "cumsum", "cumprod", "softmax", "nansum") and rng.random() < 0.3 \
                and not self.grad:
            args.append(f"dtype=torch.{rng.choice(['float64', 'float32', 'int64', 'float16'])}")
        if op in ("std", "var", "std_mean", "var_mean") and rng.random() < 0.5:
            args.append(f"correction={int(rng.integers(0, 3))}")
        if op in ("norm",) and rng.random() < 0.5:
            args.append(f"p={rng.choice(['1', '2', '3', 'inf', '-inf', '0', '0.5'])}")
        self.oracle = op in ("logsumexp", "softmax", "log_softmax", "logcumsumexp", "norm", "std", "std_mean")
        call = f"torch.{op}({a}, {', '.join(args)})" if rng.random() < 0.5 else f"{a}.{op}({', '.join(args)})"
        self.lines.append(f"result = {call}".replace(", )", ")"))

    def _shapes(self):
        rng = self.rng
        shape = self._shape(4)
        a = self.tensor(shape)
        nd = len(shape)
        n = int(np.prod(shape))
        d = int(rng.integers(-nd, nd)) if nd else 0
        d2 = int(rng.integers(-nd, nd)) if nd else 0
        size = shape[d] if nd else 1
        perm = tuple(int(i) for i in rng.permutation(nd))
        choices = {
            "view": f"{a}.view(-1)", "reshape": f"{a}.reshape({(n,) if rng.random() < 0.5 else (-1, 1)})",
            "transpose": f"{a}.transpose({d}, {d2})", "permute": f"{a}.permute{perm if nd else '()'}",
            "squeeze": f"{a}.squeeze({d})" if nd else f"{a}.squeeze()", "unsqueeze": f"{a}.unsqueeze({d})",
            "expand": f"{a}.expand({(2,) + shape})", "narrow": f"{a}.narrow({d}, {min(1, size)}, {max(0, size - 1)})",
            "select": f"{a}.select({d}, {-1 if size else 0})", "split": f"{a}.split({max(1, size // 2)}, {d})",
            "chunk": f"{a}.chunk({int(rng.integers(1, 4))}, {d})", "unbind": f"{a}.unbind({d})",
            "movedim": f"{a}.movedim({d}, {d2})", "t": f"{a}.t()", "diagonal": f"{a}.diagonal({int(rng.integers(-1, 2))})",
            "unfold": f"{a}.unfold({d}, {min(2, size)}, {int(rng.integers(1, 3))})",
            "flatten": f"{a}.flatten({d})", "unflatten": f"{a}.unflatten({d}, (1, {size}))", "mT": f"{a}.mT",
            "swapaxes": f"{a}.swapaxes({d}, {d2})", "flip": f"{a}.flip({d})", "roll": f"{a}.roll(1, {d})",
            "repeat": f"{a}.repeat({(2,) * max(nd, 1)})", "tile": f"{a}.tile((2,))", "cat": f"torch.cat([{a}, {a}], {d})",
            "stack": f"torch.stack([{a}, {a}], {d})", "tril": f"{a}.tril({int(rng.integers(-1, 2))})",
            "triu": f"{a}.triu()", "rot90": f"torch.rot90({a})", "contiguous": f"{a}.contiguous()",
            "sort": f"torch.sort({a}, dim={d}, stable=True)",
            "argsort": f"{a}.argsort({d}, stable=True)", "flipud": f"torch.flipud({a})",
            "nonzero": f"{a}.nonzero()", "unique": f"torch.unique({a}, return_inverse=True, return_counts=True)",
            "masked_select": f"{a}.masked_select({a} > 0)", "gather": f"{a}.gather({d}, {a}.argsort({d})[..., :1])",
            "take": f"torch.take({a}, torch.tensor([0, -1]))", "as_strided": f"{a}.as_strided(({min(n, 2)},), (1,))",
            "view_as": f"{a}.view_as({a})", "expand_as": f"{a}.expand_as({a}.unsqueeze(0))",
            "movedim2": f"torch.movedim({a}, 0, -1)", "atleast_2d": f"torch.atleast_2d({a})",
            "diff": f"torch.diff({a}, dim={d})", "kron": f"torch.kron({a}, {a})",
            "cat_mixed": f"torch.cat([{a}.flatten(), {self.tensor((2,))}])",
        }
        self.op = str(rng.choice(list(choices)))
        self.views = self.op in VIEWS
        self.lines.append(f"result = {choices[self.op]}")

    def _index_item(self, size):
        rng = self.rng
        roll = rng.random()
        if roll < 0.3:
            return str(int(rng.integers(-size, size))) if size else "0"
        if roll < 0.6:
            start, stop = (int(rng.integers(-size - 1, size + 2)) for _ in range(2))
            step = int(rng.choice([1, 1, 2, 3]))
            return f"{start}:{stop}:{step}" if step > 1 else f"{start}:{stop}"
        if roll < 0.75:
            k = int(rng.integers(0, 3))
            idx = rng.integers(-size, size, k).tolist() if size else []
            return f"torch.tensor({idx}, dtype=torch.long)" if rng.random() < 0.6 else repr(idx)
        if roll < 0.85:
            return f"torch.tensor({(rng.random(size) < 0.5).tolist()})"
        return ":"

    def _index_expr(self, shape):
        rng = self.rng
        items, dims = [], list(shape)
        while dims and rng.random() < 0.8:
            items.append(self._index_item(dims.pop(0)))
            if rng.random() < 0.15:
                items.append("None")
        if rng.random() < 0.2:
            items.insert(int(rng.integers(0, len(items) + 1)), "...")
        return ", ".join(items) if items else ("..." if rng.random() < 0.5 else "None")

    def _index(self):
        rng = self.rng
        shape = self._shape()
        if rng.random() < 0.5:
            a = self.tensor(shape)
            index = self._index_expr(shape)
            self.op = "getitem"
            self.views = all(k not in index for k in ("tensor", "["))
            self.lines.append(f"result = {a}[{index}]")
        else:
            a = self.tensor(shape, writable=True)
            index = self._index_expr(shape)
            self.op = "setitem"
            self.lines.append(f"y = {a}.clone()" if not self.grad else f"y = {a} * 1")
            value = self.scalar() if rng.random() < 0.4 else \
                f"torch.arange(y[{index}].numel()).reshape(y[{index}].shape).to(y.dtype)" if rng.random() < 0.5 \
                else self.tensor(self._partner(()), dtype=self._dtype())
            self.lines.append(f"y[{index}] = {value}")
            self.lines.append("result = y")

    def _inplace(self):
        """A clone written through a view of it; the whole base is the result."""
        rng = self.rng
        shape = self._shape()
        a = self.tensor(shape, writable=True)
        nd = len(shape)
        views = ["", "[::2]" if nd else "", ".t()" if nd <= 2 else "", ".diagonal()" if nd >= 2 else "",
                 ".reshape(-1)", "[..., :1]" if nd else "", ".unsqueeze(0)", f"[{0 if shape and shape[0] else ':'}]" if nd else ""]
        view = str(rng.choice(views))
        self.lines.append(f"base = {a}.clone()" if not self.grad else f"base = {a} * 1")
        self.lines.append(f"v = base{view}")
        op = str(rng.choice(INPLACE_BINARY + ("exp_", "neg_", "abs_", "zero_", "fill_", "clamp_", "sigmoid_",
                                               "relu_", "tanh_", "t_", "squeeze_", "index_fill_")))
        self.op = op + " via " + (view or "whole")
        if op in ("zero_", "exp_", "neg_", "abs_", "sigmoid_", "relu_", "tanh_", "t_", "squeeze_"):
            call = f"v.{op}()"
        elif op == "fill_":
            call = f"v.fill_({self.scalar()})"
        elif op == "clamp_":
            call = "v.clamp_(-1, 1)"
        elif op == "masked_fill_":
            call = f"v.masked_fill_(v > 0, {self.scalar()})"
        elif op == "index_fill_":
            call = "v.index_fill_(0, torch.tensor([0]), -2)"
        elif op == "maximum":
            call = "torch.maximum(v, torch.ones(()), out=v)"
        elif op == "lerp_":
            call = "v.lerp_(torch.ones(()), 0.5)"
        else:
            b = self.scalar() if rng.random() < 0.4 else self.tensor(self._partner(()))
            call = f"v.{op}({b})"
        self.lines.append(call)
        self.lines.append("result = base")
        self.oracle = op in ("exp_", "sigmoid_", "tanh_", "pow_")

    def _gradients(self, second):
        """Appends first (and second) gradients of the first tensor output w.r.t. the leaves."""
        leaves = ", ".join(name for name, grad in self.leaves if grad)
        if not leaves:
            return
        self.lines += [
            "o = result if isinstance(result, torch.Tensor) else result[0]",
            "if o.requires_grad:",
            # (arange cast, not made in o's dtype: torch has no complex arange)
            "    w = torch.arange(o.numel()).to(o.dtype).reshape(o.shape).sin() + 0.5",
            f"    g = torch.autograd.grad(o, [{leaves}], w, create_graph=True, allow_unused=True)",
            "    result = [result, o.requires_grad, list(g), [gi is not None and gi.requires_grad for gi in g]]"]
        if second:
            self.lines += [
                "    gs = [(gi * torch.arange(gi.numel(), dtype=gi.dtype).reshape(gi.shape).cos()).sum()"
                " for gi in g if gi is not None and gi.requires_grad]",
                "    if gs:",
                f"        result.append(list(torch.autograd.grad(sum(gs), [{leaves}], allow_unused=True)))"]

    def source(self):
        return "\n".join(self.lines) + "\n"



# ---------------------------------------------------------------- running and comparing
def run(source, lib):
    """Executes a case's source with ``torch`` bound to ``lib``; returns its ``result``."""
    namespace = {"torch": lib, "F": lib.nn.functional, "nan": nan, "inf": inf}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(source, namespace)
    return namespace["result"]


def _builtin_class(error):
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


class Mismatch(AssertionError):
    """ember differs from torch; ``kind`` is wrong (a value, dtype or shape), silent (torch
    raises, ember returns), crash (ember raises, torch returns), missing (a name ember lacks),
    exception (another class), meta (strides, requires_grad), lenient (ember accepts
    arguments torch's parser rejects with a TypeError) or beyond (ember differentiates where
    torch has no derivative formula: reported, not counted as failures)."""

    def __init__(self, kind, message):
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def _name(d):
    return str(d).split(".")[-1]


STRUCTURE = {}  # compare's tol for shapes, dtypes and exact (integer) values, no float values


def compare(e, t, what="result", views=False, tol=None):
    if isinstance(t, torch.Tensor) or (t is None and isinstance(e, ember.Tensor)) or \
            (e is None and isinstance(t, torch.Tensor)):
        _compare_tensor(e, t, what, views, tol)
    elif isinstance(t, (tuple, list)) and not isinstance(t, torch.Size):
        if not isinstance(e, (tuple, list)) or len(e) != len(t):
            raise Mismatch("wrong", f"{what}: {type(e).__name__} of {_len(e)} != {type(t).__name__} of {len(t)}")
        for i, (x, y) in enumerate(zip(e, t)):
            compare(x, y, f"{what}[{i}]", views, tol)
    elif isinstance(t, torch.Size):
        if tuple(e) != tuple(t):
            raise Mismatch("wrong", f"{what}: {tuple(e)} != {tuple(t)}")
    elif isinstance(t, float) and t != t:
        if not (isinstance(e, float) and e != e):
            raise Mismatch("wrong", f"{what}: {e!r} != nan")
    elif type(e) is not type(t) or e != t:
        raise Mismatch("wrong", f"{what}: {e!r} ({type(e).__name__}) != {t!r} ({type(t).__name__})")


def _len(x):
    return len(x) if isinstance(x, (tuple, list)) else "-"


def _compare_tensor(e, t, what, views, tol):
    if t is None:  # an unused input's gradient: zeros are the same
        t = torch.zeros(tuple(e.shape), dtype=getattr(torch, _name(e.dtype)))
    if e is None:
        e = ember.zeros(tuple(t.shape), dtype=getattr(ember, _name(t.dtype)))
    if not isinstance(e, ember.Tensor):
        raise Mismatch("wrong", f"{what}: expected a Tensor, got {type(e).__name__} {e!r}")
    if tuple(e.shape) != tuple(t.shape):
        raise Mismatch("wrong", f"{what}: shape {tuple(e.shape)} != torch {tuple(t.shape)}")
    if _name(e.dtype) != _name(t.dtype):
        raise Mismatch("wrong", f"{what}: dtype {_name(e.dtype)} != torch {_name(t.dtype)}")
    ea = e.detach().resolve_conj().resolve_neg()
    ea = np.asarray((ea.float() if _name(e.dtype) == "bfloat16" else ea).numpy())
    ta = t.detach().resolve_conj().resolve_neg()
    ta = (ta.float() if ta.dtype == torch.bfloat16 else ta).numpy(force=True)
    if ta.dtype.kind in "biu":
        if not np.array_equal(ea, ta):
            raise Mismatch("wrong", f"{what}: {ea.tolist()} != torch {ta.tolist()}")
    elif tol is not STRUCTURE:
        rtol, atol = (tol or {}).get(_name(t.dtype)) or TOL[_name(t.dtype)]
        ea, ta = ea.astype(np.complex128), ta.astype(np.complex128)
        for part in (np.real, np.imag):
            x, y = part(ea), part(ta)
            with np.errstate(all="ignore"):
                bad = _outside(x, y, rtol, atol)
            if bad.any():
                raise Mismatch("wrong", f"{what}: {ea.tolist()} != torch {ta.tolist()}")
    if e.requires_grad != t.requires_grad:
        raise Mismatch("meta", f"{what}: requires_grad {e.requires_grad} != torch {t.requires_grad}")
    if views and _strides(e.stride(), t.shape) != _strides(t.stride(), t.shape):
        raise Mismatch("meta", f"{what}: stride {tuple(e.stride())} != torch {tuple(t.stride())}")


def _outside(x, y, rtol, atol):
    """Where ``x`` differs from ``y``: nan or inf in other places, or finite values further
    apart than ``rtol * |y| + atol * max(1, largest |y|)``."""
    same = (np.isnan(x) == np.isnan(y)) & ((x == y) | ~np.isinf(y) & ~np.isinf(x))
    finite = np.isfinite(y) & np.isfinite(x)
    scale = float(np.abs(y[finite]).max()) if finite.any() else 0.0
    return ~same | finite & (np.abs(x - y) > rtol * np.abs(y) + atol * max(scale, 1.0))


def _strides(strides, shape):
    """Strides that matter: those of dims longer than 1, in a tensor that is not empty."""
    return [s for s, n in zip(strides, shape) if n > 1] if 0 not in shape else []


def _rounded(result):
    if isinstance(result, torch.Tensor):
        return result.float() if result.dtype == torch.float64 else \
            result.to(torch.complex64) if result.dtype == torch.complex128 else result
    if isinstance(result, (tuple, list)) and not isinstance(result, torch.Size):
        return [_rounded(x) for x in result]
    return result


def check(case):
    """Runs ``case`` in both libraries; raises Mismatch with a standalone repro if they differ."""
    source = case.source()
    repro = f"\n--- seed {case.seed} ({case.family} {case.op}); run with torch and ember:\n{source}"
    try:
        t_result = run(source, torch)
    except Exception as t_error:
        try:
            e_result = run(source, ember)
        except Exception as e_error:
            if not isinstance(e_error, _builtin_class(t_error)):
                raise Mismatch("exception", f"ember {type(e_error).__name__}: {e_error} where torch "
                               f"{type(t_error).__name__}: {t_error}{repro}") from None
            return
        kind = "lenient" if isinstance(t_error, TypeError) else \
            "beyond" if _torch_lacks(t_error) else "silent"
        raise Mismatch(kind, f"ember returned {_short(e_result)} where torch raises "
                       f"{type(t_error).__name__}: {t_error}{repro}") from None
    try:
        e_result = run(source, ember)
    except Exception as e_error:
        kind = "missing" if isinstance(e_error, AttributeError) else "crash"
        raise Mismatch(kind, f"ember {type(e_error).__name__}: {e_error}{repro}") from None
    tol = {"float64": SPECIAL_TOL64, "complex128": SPECIAL_TOL64} if case.oracle else None
    if case.oracle and "torch.float32" in source and "float64" not in source and "float16" not in source:
        try:
            # torch's float32 values are its CPU's (gelu(inf) is nan with AVX-512): structure only
            compare(e_result, t_result, views=case.views, tol=STRUCTURE)
            wide = _rounded(run(source.replace("torch.float32", "torch.float64"), torch))
            if not _overflows(t_result, wide):  # torch's float32 overflowing (norm's squares) is its definition
                t_result, tol = wide, {"float32": ORACLE_TOL, "complex64": ORACLE_TOL}
        except Mismatch as error:
            raise Mismatch(error.kind, f"{error}{repro}") from None
        except Exception:
            pass  # float64 takes another path in torch: compare with its float32 result
    try:
        compare(e_result, t_result, views=case.views, tol=tol)
    except Mismatch as error:
        raise Mismatch(error.kind, f"{error}{repro}") from None


def _overflows(narrow, wide):
    """Whether torch's float32 result holds an inf where its float64 one, rounded, is finite."""
    if isinstance(narrow, torch.Tensor) and isinstance(wide, torch.Tensor):
        return bool((narrow.isinf() & wide.isfinite()).any()) if narrow.is_floating_point() else False
    if isinstance(narrow, (tuple, list)) and isinstance(wide, (tuple, list)):
        return any(_overflows(n, w) for n, w in zip(narrow, wide))
    return False


def _torch_lacks(error):
    """torch refuses for want of a derivative, not because the call is wrong: ember computing
    one (floor_divide's zeros, an in-place asinh's) is not a defect."""
    return "derivative for" in str(error) and "not implemented" in str(error)


def _short(x):
    text = repr(x)
    return text if len(text) < 200 else text[:200] + "..."


def fuzz(first, count, skip=()):
    """Checks ``count`` cases from seed ``first`` (but those in ``skip``); returns
    {(family, kind): [messages]}."""
    failures = collections.defaultdict(list)
    for seed in range(first, first + count):
        if seed in skip:
            continue
        case = Case(seed)
        try:
            check(case)
        except Mismatch as error:
            failures[(case.family, error.kind)].append(f"[{case.op}] {error}")
        except Exception as error:  # the comparison itself failed: report, go on
            failures[(case.family, "harness")].append(f"[{case.op}] {type(error).__name__}: {error}\n"
                                                      f"{case.source()}")
    return failures


# Seeds of the default run. Cases they drew that failed before the fixes are regression tests
# in test_fuzz_eager_fixes.py; those still failing are KNOWN (seed: the defect), to be fixed.
DEFAULT_SEEDS = range(0, 300)
KNOWN = {}


def test_fuzz_default_cases():
    failures = fuzz(DEFAULT_SEEDS.start, len(DEFAULT_SEEDS), skip=KNOWN)
    messages = [m for (_, kind), ms in failures.items() if kind != "beyond" for m in ms]
    assert not messages, f"{len(messages)} failing cases:\n" + "\n".join(m[:1500] for m in messages)


@pytest.mark.skipif(not os.environ.get("EMBER_FUZZ_EAGER"), reason="set EMBER_FUZZ_EAGER=N for the long run")
def test_fuzz_long():
    first, count = int(os.environ.get("EMBER_FUZZ_EAGER_SEED", 100000)), int(os.environ["EMBER_FUZZ_EAGER"])
    failures = fuzz(first, count)
    total = sum(len(v) for (_, kind), v in failures.items() if kind != "beyond")
    table = "\n".join(f"{fam:8} {kind:9} {len(ms):6}" for (fam, kind), ms in sorted(failures.items()))
    detail = "\n".join(m[:1200] for ms in failures.values() for m in ms[:int(os.environ.get("EMBER_FUZZ_SHOW", 5))])
    assert not total, f"{total} of {count} cases fail ({100 * (count - total) / count:.1f}% pass)\n{table}\n{detail}"
