"""Hook plumbing for modules: removable handles and the full backward hooks
(the behaviour of ``torch.utils.hooks.RemovableHandle`` and ``BackwardHook``)."""
import warnings

from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import STATE
from ...utils.hooks import RemovableHandle

__all__ = ["RemovableHandle", "BackwardHook"]


class _BackwardHookFunction(Function):
    """Identity on ``tensors`` whose backward hands the incoming gradients to ``on_backward``,
    which returns the gradients to pass on."""

    runs_hooks = True  # (its backward is the user's Python: a compiled graph does not hold it)

    @staticmethod
    def forward(ctx, on_backward, *tensors):
        ctx.on_backward = on_backward
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_backward(grads))


class BackwardHook:
    """Runs a module's full backward hooks for one call.

    The module's tensor inputs and outputs each pass through one identity node: the output node
    sees ``grad_output`` (backward pre-hooks may replace it), the input node sees ``grad_input``
    and calls ``hook(module, grad_input, grad_output)``, whose result may replace ``grad_input``.
    Non-tensor positions are given as None. When no input requires grad the hooks run at the
    output node with ``grad_input`` all None.
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_index = None
        self.n_outputs = 0
        self.output_index = None

    @staticmethod
    def _wrap(on_backward, values):
        """``values`` with its tensors passed through the identity node, and their positions
        (None when nothing requires grad, so that no node is made)."""
        index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        if not (STATE.enabled and any(values[i].requires_grad for i in index)):
            return values, None
        wrapped = _BackwardHookFunction.apply(on_backward, *[values[i] for i in index])
        out = list(values)
        for i, t in zip(index, wrapped):
            out[i] = t
        return tuple(out), index

    @staticmethod
    def _pack(index, values, size):
        out = [None] * size
        for i, v in zip(index, values):
            out[i] = v
        return tuple(out)

    def setup_input_hook(self, args):
        """Wraps the forward's tensor ``args`` so that their gradients reach the module's full
        backward hooks; returns the arguments to call ``forward`` with."""
        self.n_inputs = len(args)
        args, self.input_index = self._wrap(self._on_grad_input, args)
        return args

    def setup_output_hook(self, result):
        """Wraps the forward's result (a tensor or a tuple) so that the gradients of the outputs
        are collected for the hooks; returns the result to hand back."""
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        self.n_outputs = len(outputs)
        outputs, self.output_index = self._wrap(self._on_grad_output, outputs)
        return outputs[0] if single else outputs

    def _on_grad_output(self, grads):
        self.grad_outputs = self._pack(self.output_index, grads, self.n_outputs)
        for hook in self.user_pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(new)}, but expected {len(self.grad_outputs)}")
            self.grad_outputs = new
        grad_outputs = self.grad_outputs
        if self.input_index is None:
            warnings.warn("Full backward hook is firing when gradients are computed with respect "
                          "to module outputs since no inputs require gradients.", stacklevel=2)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                       "should always return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in self.output_index)

    def _on_grad_input(self, grads):
        if self.grad_outputs is None:
            # The gradient reached the inputs without passing through the outputs.
            return grads
        grad_inputs = self._pack(self.input_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            new = hook(self.module, grad_inputs, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(grad_inputs):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(new)}, but expected {len(grad_inputs)}")
            grad_inputs = new
        self.grad_outputs = None
        return tuple(grad_inputs[i] for i in self.input_index)


def remove_reparametrization(module, kind, name, function):
    """Takes out the forward pre-hook of class ``kind`` that recomputes ``module.<name>`` (as
    ``weight_norm``/``spectral_norm`` install it), lets it put ``name`` back as a plain parameter,
    and returns ``module``; ValueError naming ``function`` when there is none."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"{function} of '{name}' not found in {module}")
