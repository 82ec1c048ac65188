"""Derivatives torch does not implement: a result that requires grad but cannot be differentiated.

Some of torch's backward formulas have no derivative of their own (``hardsigmoid_backward``,
``multi_margin_loss_backward``), and some functions none at all (``detach_copy``). Their results
still require grad, on a node torch names ``torch::autograd::NotImplemented`` whose backward
raises RuntimeError "derivative for aten::<name> is not implemented"; so in torch a second
derivative through ``hardsigmoid`` raises where a zero would be silently wrong.
:func:`not_implemented_link` makes that node (:func:`refusing_link` one of another name and
message); :func:`first_order` marks the input of a composite
function (ember's ``multi_margin_loss`` is one) whose gradient torch computes in one such formula.
Source: torch 2.13's ``tools/autograd/derivatives.yaml`` ("not_implemented") and its behaviour.
"""
from ..autograd.grad_mode import STATE
from .core import Op, apply, like_input, named

__all__ = ["first_order", "not_implemented_link", "refusing_link"]


class NotImplementedLink(Op):
    """``value`` unchanged (a copy), recorded as depending on ``inputs``; its backward raises
    RuntimeError ``message`` (torch's words for the derivative it lacks)."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(value, *inputs, message):
        return value.copy()

    @classmethod
    def infer(cls, value, *inputs, message):
        return tuple(value.shape), value.dtype

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError(ctx.attrs["message"])


def not_implemented_link(value, name, *inputs):
    """``value``, made by ATen function ``name`` from ``inputs``, on torch's NotImplemented node
    when grad mode is on (in a backward: under ``create_graph``) and an input requires grad;
    differentiating it raises RuntimeError "derivative for aten::``name`` is not implemented"."""
    return refusing_link(value, f"derivative for aten::{name} is not implemented", "torch::autograd::NotImplemented",
                         *inputs)


def refusing_link(value, message, node, *inputs):
    """``value`` made from ``inputs`` on a node called ``node`` whose backward raises RuntimeError
    ``message``, when grad mode is on and an input requires grad (else ``value`` itself)."""
    if not STATE.enabled:
        return value
    return named(apply(NotImplementedLink, value, *inputs, message=message), node)


class FirstOrder(Op):
    """``x`` itself (a view of it) whose gradient, under ``create_graph``, goes through
    :func:`not_implemented_link`: the composite computed from it differentiates once, as torch's
    fused function ``name`` does, and a second derivative raises as torch's."""
    promote = None
    is_view = True
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, name):
        return x.view()

    @staticmethod
    def backward(ctx, g):
        return (not_implemented_link(g, ctx.attrs["name"], ctx.input(0)),)


def first_order(x, name):
    """``x`` marked as the input of a composite standing for torch's function whose backward
    ``name`` (``"multi_margin_loss_backward"``) has no derivative (:class:`FirstOrder`); ``x``
    itself when nothing is recorded."""
    if not (STATE.enabled and x.requires_grad):
        return x
    return apply(FirstOrder, x, name=name)
