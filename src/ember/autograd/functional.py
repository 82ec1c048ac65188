"""``torch.autograd.functional``: Jacobians, Hessians and their products with vectors, of a
function of tensors (https://pytorch.org/docs/stable/autograd.html#functional-higher-level-api).

Every one is reverse-mode autograd on a fresh graph: the inputs are detached copies that
require grad, so the caller's graph is untouched (``create_graph=True`` keeps the results
differentiable). A Jacobian is one vector-Jacobian product per output element (PyTorch's
``vectorize=True`` batches them; here the flag is accepted and the rows are computed one by
one); ``jvp`` and ``hvp`` use the double-backward trick (the Jacobian-vector product is the
gradient, with respect to a dummy cotangent, of a vector-Jacobian product).

Shapes: for inputs ``x_j`` and outputs ``y_i`` the Jacobian block ``[i][j]`` is
``y_i.shape + x_j.shape``; single tensors (not tuples) give the block itself.
"""
from .._creation import eye, zeros_like
from .._ops.join import stack
from .._tensor import Tensor
from .engine import grad as _grad
from .grad_mode import enable_grad

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _tuple(value, arg_name, fn_name):
    is_tuple = isinstance(value, tuple)
    if not is_tuple and not isinstance(value, Tensor):
        raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                        f"the given {arg_name} has type {type(value)}.")
    values = value if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                            f"but the value at index {i} has type {type(v)}.")
    return is_tuple, values


def _prepare(inputs, create_graph):
    """Inputs for a fresh graph: detached copies that require grad (views that keep the
    caller's graph when ``create_graph`` and they already require grad)."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(True)
                 for x in inputs)


def _input_vector(v, inputs, fn_name):
    """The vector ``v`` shaped like ``inputs`` as a tuple; ones for a single one-element input
    when omitted (RuntimeError for any other input)."""
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function "
                               "is a single Tensor with a single element.")
        return (zeros_like(inputs[0]) + 1,)
    return _tuple(v, "v", fn_name)[1]


def _result(values, create_graph):
    return tuple(v if create_graph or v is None else v.detach() for v in values)


def _restructure(values, is_tuple):
    return values if is_tuple else values[0]


def _gradients(outputs, inputs, grad_outputs, create_graph, strict, kind):
    """The vector-Jacobian products, zeros where an input does not reach the outputs
    (RuntimeError in ``strict`` mode)."""
    used = [o for o in outputs if o.requires_grad]
    grads = _grad([o for o in used], inputs, [g for o, g in zip(outputs, grad_outputs) if o.requires_grad],
                  retain_graph=True, create_graph=create_graph, allow_unused=True) if used else (None,) * len(inputs)
    out = []
    for i, (g, x) in enumerate(zip(grads, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The {kind} for input {i} is independent of the input. This is not allowed in "
                                   "strict mode.")
            g = zeros_like(x)
        out.append(g)
    return tuple(out)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product, shaped like ``inputs``. ``v``
    (shaped like the outputs) may be omitted only for a one-element output."""
    with enable_grad():
        is_inputs_tuple, inputs = _tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _tuple(outputs, "outputs of the user-provided function", "vjp")
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a "
                                   "single Tensor with a single element.")
            v = (zeros_like(outputs[0]) + 1,)
        else:
            _, v = _tuple(v, "v", "vjp")
        grads = _gradients(outputs, inputs, v, create_graph, strict, "vjp")
    return (_restructure(_result(outputs, create_graph), is_outputs_tuple),
            _restructure(_result(grads, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, shaped like the outputs. ``v``
    (shaped like ``inputs``) may be omitted only for a one-element input."""
    with enable_grad():
        is_inputs_tuple, inputs = _tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        v = _input_vector(v, inputs, "jvp")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _tuple(outputs, "outputs of the user-provided function", "jvp")
        cotangents = tuple(zeros_like(o).requires_grad_(True) for o in outputs)
        grads = _gradients(outputs, inputs, cotangents, True, strict, "jvp")
        products = _grad(grads, cotangents, v, create_graph=create_graph, allow_unused=True)
        products = tuple(zeros_like(o) if p is None else p for p, o in zip(products, outputs))
    return (_restructure(_result(outputs, create_graph), is_outputs_tuple),
            _restructure(_result(products, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: block ``[i][j]`` of shape
    ``outputs[i].shape + inputs[j].shape`` (tuples collapse where ``inputs`` or the outputs
    are single tensors). ``strategy="forward-mode"`` needs ``vectorize=True``, as PyTorch's."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    with enable_grad():
        is_inputs_tuple, inputs = _tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _tuple(outputs, "outputs of the user-provided function", "jacobian")
        blocks = []
        for i, output in enumerate(outputs):
            basis = eye(output.numel(), dtype=output.dtype)
            rows = [[] for _ in inputs]
            for k in range(output.numel()):
                seed = [zeros_like(o) for o in outputs]
                seed[i] = basis[k].reshape(output.shape)
                row = _gradients(outputs, inputs, seed, create_graph, False, "jacobian")
                for j, g in enumerate(row):
                    rows[j].append(g)
            block = []
            for j, x in enumerate(inputs):
                if rows[j]:
                    jac = stack(rows[j]).reshape(tuple(output.shape) + tuple(x.shape))
                else:  # an empty output
                    jac = x.new_zeros(tuple(output.shape) + tuple(x.shape))
                if strict and output.numel() and not _reaches(output, x):
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. "
                                       "This is not allowed in strict mode.")
                block.append(jac if create_graph else jac.detach())
            blocks.append(_restructure(tuple(block), is_inputs_tuple))
    return _restructure(tuple(blocks), is_outputs_tuple)


def _reaches(output, x):
    if not output.requires_grad:
        return False
    (g,) = _grad(output.sum(), x, retain_graph=True, allow_unused=True)
    return g is not None


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar ``func`` at ``inputs``: ``inputs.shape + inputs.shape`` (blocks
    ``[i][j]`` for a tuple). RuntimeError unless ``func`` returns a one-element tensor."""
    is_inputs_tuple, inputs = _tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        output = func(*xs)
        is_tuple, output = _tuple(output, "outputs of the user-provided function", "hessian")
        if is_tuple or output[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        return _gradients(output, xs, (zeros_like(output[0]) + 1,), True, strict, "hessian")

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize)
    return result if is_inputs_tuple else result[0][0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for the scalar ``func``, shaped like ``inputs``."""
    with enable_grad():
        is_inputs_tuple, inputs = _tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph)
        v = _input_vector(v, inputs, "vhp")
        output = func(*inputs)
        is_tuple, outputs = _tuple(output, "outputs of the user-provided function", "vhp")
        if is_tuple or outputs[0].numel() != 1:
            raise RuntimeError("The function given to vhp should return a single Tensor with a single element")
        first = _gradients(outputs, inputs, (zeros_like(outputs[0]) + 1,), True, strict, "vhp")
        second = _gradients(first, inputs, v, create_graph, strict, "vhp")
    return _result(outputs, create_graph)[0], _restructure(_result(second, create_graph), is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for the scalar ``func``; equal to ``vhp`` (the Hessian of a twice
    differentiable function is symmetric), computed as its transpose product."""
    return vhp(func, inputs, v, create_graph, strict)
