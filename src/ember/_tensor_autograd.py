"""The autograd methods of :class:`~ember.Tensor`: its history (``requires_grad``, ``grad_fn``,
the version counter, the aliases ops record), ``requires_grad_``, ``detach``, ``backward``,
``register_hook``, ``retain_grad``, ``is_inference`` (and the constructors ``inference_mode``
swaps in)
(https://pytorch.org/docs/stable/autograd.html#tensor-autograd-functions). Tensor inherits
them; its data, attributes and method table are in ``_tensor.py``."""
import warnings
import weakref

from ._ops import core as _core
from .autograd.engine import backward as _backward
from .autograd.grad_mode import CREATION_SWITCHES, STATE, InferenceVersions
from .autograd.graph import _Handle, gradient_edge

__all__ = ["TensorAutograd"]


_NON_LEAF_GRAD = ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                  "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                  "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If "
                  "you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. "
                  "See github.com/pytorch/pytorch/pull/30531 for more information.")


class TensorAutograd:
    """The autograd part of :class:`~ember.Tensor` (whose slots it reads)."""
    __slots__ = ()

    @property
    def _version(self):
        """How many in-place writes this tensor's memory has had (shared with its views;
        ``_versions`` is the shared one-element counter). RuntimeError for an inference tensor."""
        if type(self._versions) is InferenceVersions:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._versions[0]

    def is_inference(self):
        """Whether this tensor was made inside ``inference_mode`` (or is a view of one that was)
        (https://pytorch.org/docs/stable/generated/torch.Tensor.is_inference.html)."""
        return type(self._versions) is InferenceVersions

    # A view whose storage was written since its history was set answers with its history
    # remade from its base's (_core.refresh_view), as torch regenerates a view's grad_fn.
    # A view made under no_grad/inference_mode or by split/unbind requires grad through its base too.
    @property
    def requires_grad(self):
        if self._view_chain is not None:
            if self._view_creation is not None:  # (torch refuses its grad_fn once stale, not this question)
                return self._requires_grad or self._base.requires_grad
            if self._view_version != self._versions[0]:
                _core.refresh_view(self)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._requires_grad = value

    @property
    def grad(self):
        """The gradient accumulated by backward (None until one arrives). Reading it on a
        non-leaf tensor that does not retain its gradient, while it is None, warns as torch's
        ``Tensor.grad`` does (UserWarning: backward never fills it)."""
        grad = self._grad
        if grad is None and self._grad_fn is not None and not self._retains_grad:
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return grad

    @grad.setter
    def grad(self, value):
        self._grad = value

    @property
    def grad_fn(self):
        if self._view_chain is not None and self._view_version != self._versions[0]:
            _core.refresh_view(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, value):
        self._grad_fn = value

    def _alias_with_history(self):
        """A handle on the same storage that carries this tensor's current history, so a
        later in-place rebase of ``self`` does not change what an op recorded."""
        t = self._alias()
        t.grad_fn = self.grad_fn
        t.requires_grad = self.requires_grad
        t._node = self._node if self.grad_fn is None else None
        if self.grad_fn is None and self.requires_grad:
            t._node = gradient_edge(self)[0]
        return t

    def _alias(self):
        """A new handle on the same storage and version counter, with no history."""
        t = self._make(self._data)
        t._versions = self._versions
        t._base = self._base if self._base is not None else self
        return t

    def requires_grad_(self, requires_grad=True):
        """Sets ``requires_grad`` in place on a leaf; RuntimeError for non-float dtypes or for
        a non-leaf being told to stop requiring grad."""
        if requires_grad and not self.dtype.is_inexact:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and type(self._versions) is InferenceVersions and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        self.requires_grad = bool(requires_grad)
        return self

    def detach(self):
        """A new tensor sharing storage (and version counter) with no history."""
        return self._alias()

    def detach_(self):
        """Makes ``self`` a leaf in place: no history, ``requires_grad`` False; returns ``self``."""
        self.grad_fn = None
        self.requires_grad = False
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Computes the gradient of this tensor with respect to the leaves of its graph and adds
        it into each leaf's ``.grad`` (``torch.Tensor.backward``,
        https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html).

        The graph is walked once in reverse topological order by
        :func:`ember.autograd.backward`; gradients accumulate, so call ``optimizer.zero_grad()``
        (or set ``.grad = None``) between steps. Non-leaf tensors keep no ``.grad`` unless
        :meth:`retain_grad` was called.

        Args:
            gradient (Tensor, optional): the gradient of some scalar with respect to ``self``
                (a vector–Jacobian product's vector): same shape as ``self``, a floating dtype.
                Required unless ``self`` has one element; None means ``1.0``.
            retain_graph (bool, optional): keep the graph's saved tensors so that backward can
                run through it again. Default: the value of ``create_graph``.
            create_graph (bool): record the backward computation itself, so that the gradients
                have a ``grad_fn`` and can be differentiated again. Default: False.
            inputs (Tensor or sequence of Tensor, optional): accumulate only into these
                tensors' ``.grad`` (leaves or not); others are left unchanged.

        Returns:
            None. Each leaf ``x`` with ``requires_grad=True`` that ``self`` depends on has
            ``x.grad`` (same shape and dtype as ``x``) incremented by ``d(self)/dx``.

        Raises:
            RuntimeError: ``self`` does not require grad ("element 0 of tensors does not
                require grad ..."); ``self`` has several elements and ``gradient`` is None
                ("grad can be implicitly created only for scalar outputs"); ``gradient``'s
                shape differs from ``self``'s (the message names both); a second backward
                through a graph whose saved tensors were freed (pass ``retain_graph=True``); a
                saved tensor was modified in place after it was saved; ``inputs`` is empty.

        Example::

            >>> import ember
            >>> x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
            >>> loss = (x ** 2).sum()           # a scalar: d(loss)/dx = 2x
            >>> loss.backward()
            >>> x.grad
            tensor([2., 4., 6.])
            >>> y = x * x                        # not a scalar: give the vector of the product
            >>> y.backward(ember.tensor([1.0, 0.0, 1.0]))
            >>> x.grad                           # accumulated: 2x + (2x, 0, 2x)
            tensor([ 4.,  4., 12.])
            >>> (x * x).backward()
            Traceback (most recent call last):
                ...
            RuntimeError: grad can be implicitly created only for scalar outputs
        """
        _backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """``hook(grad) -> Tensor or None`` runs when the gradient of this tensor is computed;
        its return value replaces the gradient. Returns a handle with ``remove()``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = gradient_edge(self)[0]
        return node.register_prehook(hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor) -> None`` runs after a backward has accumulated this leaf's gradient
        into ``.grad`` (not for ``autograd.grad``, which accumulates nothing): an optimizer step
        per parameter inside the backward, for one. Returns a handle with ``remove()``.

        Raises:
            RuntimeError: the tensor does not require grad, or is not a leaf (torch's messages);
                during backward, a hook that returns something other than None.
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        return _Handle(gradient_edge(self)[0].post_accumulate_grad_hooks(), hook)

    def retain_grad(self):
        """Keeps ``.grad`` for this non-leaf tensor after backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        ref = weakref.ref(self)

        def keep(grads):  # (its node's output gradients)
            t = ref()
            grad = None if t is None else grads[t._output_nr]
            if grad is not None:
                t.grad = grad.detach().clone() if t.grad is None else t.grad + grad.detach()
        self._retains_grad = keep  # kept so that a view's remade history can take it over
        self.grad_fn.metadata.setdefault("retain", []).append(keep)

    def _move_retain(self, old_node):
        """Moves the ``retain_grad`` hook from ``old_node`` to this tensor's current node."""
        if old_node is not None:
            old_node.metadata["retain"].remove(self._retains_grad)
        self._grad_fn.metadata.setdefault("retain", []).append(self._retains_grad)

    @property
    def retains_grad(self):
        return bool(self._retains_grad)


def _inference_creation(inference):
    """``inference_mode``'s switch (``grad_mode.CREATION_SWITCHES``): while it is on, the Tensor
    constructors give each new tensor an :class:`InferenceVersions` counter; off, the plain
    ones are back (so the mode costs nothing per op outside it)."""
    cls = _core._Tensor
    if not _PLAIN:
        _PLAIN.update(_make=cls.__dict__["_make"], _init=cls.__dict__["_init"])
    if inference:
        cls._make, cls._init = classmethod(_make_inference), staticmethod(_init_inference)
    else:
        cls._make, cls._init = _PLAIN["_make"], _PLAIN["_init"]


def _make_inference(cls, data):
    t = _PLAIN["_make"].__func__(cls, data)
    t._versions = InferenceVersions([0])
    return t


def _init_inference(self, data, requires_grad=False):
    _PLAIN["_init"].__func__(self, data, requires_grad)
    self._versions = InferenceVersions([0])


_PLAIN = {}
CREATION_SWITCHES.append(_inference_creation)
