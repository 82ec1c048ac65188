"""FLOP counting by op dispatch (``torch.utils.flop_counter``,
https://pytorch.org/docs/stable/generated/torch.utils.flop_counter.FlopCounterMode.html).

Only matrix products, convolutions and attention are counted, with PyTorch's rules: a
product of an (m, k) and a (k, n) matrix costs ``2 * m * n * k`` FLOPs (a multiply and an add
per term, bias additions free), a convolution ``2 * N * C_out * (C_in / groups) * prod(kernel)
* prod(output spatial)``, and attention its two batched products. Counts are keyed by the
ATen op PyTorch's counter reports for the same computation on CPU (``aten.mm``,
``aten.addmm``, ``aten.bmm``, ``aten.convolution``, ``aten.convolution_backward``), so the
two counters' tables can be compared line by line.
"""
import threading
import warnings
import weakref
from collections import defaultdict
from math import prod

from .._ops import core
from .._tensor import Tensor
from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

__all__ = ["FlopCounterMode", "register_flop_formula", "op_flops"]

_CONV_OPS = ("Conv", "ConvTranspose", "ConvWeight")


def _matmul(a, b, out_shape, **attrs):
    # course:begin 14/matmul-flops
    # hint: a (M, K) @ (K, N) product takes M*N*K multiply-adds: 2*M*N*K FLOPs; batches multiply
    # hint: return ("aten.mm" or "aten.bmm", flops), or None for vectors (torch counts no mv/dot)
    if len(b) < 2:  # matrix-vector and dot products: PyTorch's counter has no rule for mv/dot
        return None
    key = "aten.bmm" if len(a) >= 3 and len(b) >= 3 else "aten.mm"
    return key, 2 * prod(out_shape) * a[-1]
    # course:end 14/matmul-flops


def _addmm(input, mat1, mat2, *, out_shape, **attrs):
    # course:begin 14/linear-flops
    # hint: nn.Linear with a bias runs addmm(bias, x, weight.t()): 2 FLOPs per multiply-add of
    # hint: mat1 @ mat2 for every output element, keyed aten.addmm; the bias add itself is not counted
    return "aten.addmm", 2 * prod(out_shape) * mat1[-1]
    # course:end 14/linear-flops


def _conv(x, weight, bias=None, *, out_shape, **attrs):
    # weight is (C_out, C_in / groups, *kernel): each output position takes one product over
    # the kernel window.
    return "aten.convolution", 2 * x[0] * weight[0] * weight[1] * prod(weight[2:]) * prod(out_shape[2:])


def _conv_transpose(x, weight, bias=None, *, out_shape, **attrs):
    # weight is (C_in, C_out / groups, *kernel): each input position scatters one kernel window.
    return "aten.convolution", 2 * x[0] * weight[0] * weight[1] * prod(weight[2:]) * prod(x[2:])


def _conv_weight(x, grad_output, *, out_shape, **attrs):
    # PyTorch's convolution_backward rule for the weight gradient: every input channel meets
    # every output channel (so grouped convolutions count ``groups`` times the forward).
    return "aten.convolution_backward", 2 * x[0] * x[1] * grad_output[1] * prod(out_shape[2:]) \
        * prod(grad_output[2:])


def _attention_weights(query, key, mask=None, *, out_shape, **attrs):
    return "aten.bmm", 2 * prod(out_shape) * query[-1]


def _einsum(*shapes, out_shape, equation, **attrs):
    # PyTorch contracts a pair of operands with one bmm over every letter they use, after
    # summing out the letters only one of them has; without a contracted letter it multiplies
    # elementwise (not counted). Longer chains go pairwise in an order of its choosing: not
    # counted here.
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    if len(terms) != 2:
        return None
    a, b = terms
    if not any(c in b and c not in output for c in a):
        return None
    sizes = {}
    for term, shape in zip(terms, shapes):
        for c, n in zip(term, shape):
            sizes[c] = max(sizes.get(c, 1), n)
    letters = [c for c in sizes if c in output or (c in a and c in b)]
    return "aten.bmm", 2 * prod(sizes[c] for c in letters)


FORMULAS = {"Matmul": _matmul, "Einsum": _einsum, "Addmm": _addmm, "Conv": _conv, "ConvTranspose": _conv_transpose,
            "ConvWeight": _conv_weight, "AttentionWeights": _attention_weights}


def register_flop_formula(op_name, formula):
    """Counts the op entry named ``op_name`` (``"Matmul"``, an :class:`~ember._ops.core.Op`
    subclass name) with ``formula(*input_shapes, out_shape=..., **attrs) -> (key, flops)`` or
    None for "not counted"; input shapes are tuples (None for non-tensor inputs)."""
    FORMULAS[op_name] = formula


def op_flops(op, inputs, attrs, output, formulas=FORMULAS):
    """``(key, flops)`` for one application of ``op``, or None when it is not counted."""
    formula = formulas.get(op.name)
    if formula is None:
        return None
    shapes = [tuple(x.shape) if isinstance(x, Tensor) else None for x in inputs]
    return formula(*shapes, out_shape=tuple(output.shape), **attrs)


class FlopCounterMode(core.Observer):
    """Counts the FLOPs of the ops run inside ``with FlopCounterMode() as counter:``, overall
    (``"Global"``) and per module path (``"Sequential"``, ``"Sequential.0"``, ...: the outermost
    module called is named by its class, children by attribute). Backward ops count towards
    the modules whose forward recorded them.

    Args:
        mods: accepted for PyTorch compatibility and ignored with a warning, as in PyTorch
            (modules are found by global module hooks).
        depth (int): module nesting shown by the table printed on exit.
        display (bool): print :meth:`get_table` on exit.
        custom_mapping (dict): op entry name -> formula, as in :func:`register_flop_formula`,
            used in addition to the built-in rules.

    Example::

        >>> import ember
        >>> with FlopCounterMode(display=False) as counter:
        ...     _ = ember.ones(4, 3) @ ember.ones(3, 5)
        >>> counter.get_total_flops()
        120
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        self.depth = depth
        self.display = display
        self.formulas = {**FORMULAS, **(custom_mapping or {})}
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self._modules = []            # forward module path stack
        self._names = weakref.WeakKeyDictionary()
        self._seen = weakref.WeakSet()
        self._node_parents = weakref.WeakKeyDictionary()
        self._running = []            # (parents, op) of the backward nodes being run
        self._handles = []
        self._thread = None

    def get_total_flops(self):
        """All counted FLOPs (int)."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """``{module path: {op key: FLOPs}}``, "Global" included."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        """The per-module table PyTorch prints: Module, FLOP (scaled to the total's unit),
        % Total; modules deeper than ``depth`` are left out."""
        depth = self.depth if depth is None else depth
        depth = 999999 if depth is None else depth
        total = self.get_total_flops()
        suffix = _suffix(total)
        rows, subsumed = [], False
        for name in sorted(self.flop_counts):
            if name == "Global" or name.count(".") + 1 > depth:
                continue
            module_rows, covers = self._module_rows(name, name.count("."), total, suffix)
            subsumed |= covers
            rows += module_rows
        if "Global" in self.flop_counts and not subsumed:
            rows = self._module_rows("Global", 0, total, suffix)[0] + [[" " + r[0]] + r[1:] for r in rows]
        if not rows:
            rows = [["Global", "0", "0%"]]
        return _simple_table(["Module", "FLOP", "% Total"], rows, ("<", ">", ">"))

    def _module_rows(self, name, indent, total, suffix):
        counts = self.flop_counts[name]
        flops = sum(counts.values())
        pad = " " * indent
        rows = [[pad + name, _scaled(flops, suffix), _percent(flops, total)]]
        rows += [[pad + " - " + k, _scaled(v, suffix), _percent(v, total)] for k, v in counts.items()]
        return rows, flops >= total

    # ---- dispatch observer ----------------------------------------------------------------
    def op_exit(self, op, inputs, attrs, output):
        """Called by the dispatcher after each op: adds the op's FLOPs (``op_flops``) to the total
        and to each module the op ran in."""
        if output is None or threading.get_ident() != self._thread:
            return
        if self._running:
            parents, node_op = self._running[-1]
        else:
            parents, node_op = ("Global", *dict.fromkeys(self._modules)), None
            # a multi-result op's results share one node
            node = output.grad_fn if type(output) is not tuple else next(
                (o.grad_fn for o in output if o is not None), None)
            if node is not None:
                self._node_parents[node] = parents
        counted = op_flops(op, inputs, attrs, output, self.formulas)
        if counted is None:
            return
        key, flops = counted
        if node_op is not None and node_op.name in _CONV_OPS and op.name in _CONV_OPS:
            key = "aten.convolution_backward"  # PyTorch counts a conv's whole backward as one op
        for name in parents:
            self.flop_counts[name][key] += flops

    def node_enter(self, node):
        """Called by the engine before each backward node: its FLOPs count under the modules of the
        forward op it differentiates."""
        if threading.get_ident() != self._thread:
            return
        self._running.append((self._node_parents.get(node, ("Global",)), getattr(node, "op", None)))

    def node_exit(self, node):
        """Called by the engine after each backward node: leaves the modules entered for it."""
        if threading.get_ident() == self._thread and self._running:  # empty: exited inside the node
            self._running.pop()

    # ---- module tracking --------------------------------------------------------------------
    def _pre_hook(self, module, args):
        if threading.get_ident() != self._thread:
            return
        self._modules.append(self._name(module))

    def _name(self, module):
        # PyTorch's ModuleTracker: the first module called is named by its class; the first
        # time a module is seen its whole subtree is named by attribute path, so the layers
        # of a ModuleList (never called itself) read "TransformerEncoder.layers.0".
        name = self._names.get(module)
        if name is None:
            name = self._names[module] = type(module).__name__
        if module not in self._seen:
            for child_name, child in module.named_children():
                self._names[child] = f"{name}.{child_name}"
                self._name(child)
            self._seen.add(module)
        return name

    def _post_hook(self, module, args, output):
        if threading.get_ident() != self._thread:
            return
        self._modules.pop()

    def __enter__(self):
        self.flop_counts.clear()
        self._thread = threading.get_ident()  # like torch's dispatch modes: this thread only
        self._handles = [register_module_forward_pre_hook(self._pre_hook),
                         register_module_forward_hook(self._post_hook, always_call=True)]
        core.OBSERVERS.append(self)
        return self

    def __exit__(self, *exc):
        core.OBSERVERS.remove(self)
        for handle in self._handles:
            handle.remove()
        self._modules.clear()
        if self.display:
            print(self.get_table(self.depth))
        return False


_SUFFIXES = ["", "K", "M", "B", "T"]


def _suffix(number):
    # 1.01B reads as 1001M: a suffix only from four digits past its power
    return _SUFFIXES[max(0, min(len(_SUFFIXES) - 1, (len(str(number)) - 2) // 3))]


def _scaled(number, suffix):
    if not suffix:  # tabulate reads a column of plain numbers as floats and prints them "g"-style
        return str(number)
    return f"{number / 1000 ** _SUFFIXES.index(suffix):.3f}{suffix}"


def _percent(part, whole):
    return "0%" if whole == 0 else f"{part / whole:.2%}"


def _simple_table(headers, rows, align):
    """Rows under underlined headers, columns two spaces apart (tabulate's "simple" format,
    which PyTorch's counter prints with)."""
    widths = [max([len(h) + 2] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(f"{str(c):{a}{w}}" for c, a, w in zip(cells, align, widths)).rstrip()
    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])
