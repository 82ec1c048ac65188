"""``torch.func``: function transforms (https://pytorch.org/docs/stable/func.html):
``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``,
``hessian``, ``vmap``, ``functional_call`` and ``stack_module_state``.

They are built on ember's reverse-mode autograd rather than on PyTorch's batching and
forward-mode interpreters, and say so where it shows:

- ``grad``/``vjp``/``jacrev`` differentiate the function on a fresh graph; when an input
  already requires grad (a transform nested inside another, ``hessian = jacfwd(jacrev(f))``)
  the graph is kept so the outer transform can differentiate the result again.
- ``jacfwd`` gives the same Jacobian as ``jacrev`` (computed in reverse mode); ``jvp`` is the
  transpose of a vector-Jacobian product (a second reverse pass through the first one).
- ``vmap`` runs the function once per batch element and stacks the results: PyTorch's
  semantics (``in_dims``, ``out_dims``, ``randomness``), none of its batching speed.

Arguments may be pytrees: tensors in (nested) tuples, lists and dicts, as the parameter
dictionaries ``functional_call`` takes.
"""
from .. import _random
from .._ops.join import stack
from .._tensor import Tensor
from ..autograd.engine import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad

__all__ = ["functional_call", "stack_module_state", "grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev",
           "jacfwd", "hessian", "vmap"]


# ---- pytrees ---------------------------------------------------------------------------------
def _flatten(tree):
    """(leaves, rebuild): the tensors of a nest of tuples, lists and dicts, in order, and the
    function that puts new leaves back in the same structure."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(x) for x in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def rebuild(new, parts=parts, kind=type(tree)):
            out, i = [], 0
            for p in parts:
                out.append(p[1](new[i:i + len(p[0])]))
                i += len(p[0])
            return kind(out)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, rebuild_values = _flatten([tree[k] for k in keys])
        return leaves, lambda new: dict(zip(keys, rebuild_values(new)))
    return [tree], lambda new: new[0]


# ---- functional_call --------------------------------------------------------------------------
def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the parameters and buffers named in the dict (or tuple
    of dicts) swapped in for the call, then restored: the model as a function of its weights.
    Tied weights (one Parameter under two names) follow a single given name when
    ``tie_weights``. ``strict`` requires every parameter and buffer to be given (RuntimeError
    naming the missing and unexpected keys); a key in two dicts is a ValueError."""
    dicts = parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, tuple) \
        else (parameter_and_buffer_dicts,)
    merged = {}
    repeated = sorted(k for i, d in enumerate(dicts) for k in d if any(k in e for e in dicts[:i]))
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    for d in dicts:
        merged.update(d)
    owned = dict(module.named_parameters(remove_duplicate=False))
    owned.update(module.named_buffers(remove_duplicate=False))
    if tie_weights:
        by_identity = {}
        for name, value in owned.items():
            by_identity.setdefault(id(value), []).append(name)
        for names in by_identity.values():
            given = [n for n in names if n in merged]
            for n in names:
                if given and n not in merged:
                    merged[n] = merged[given[0]]
    if strict:
        missing = [k for k in owned if k not in merged]
        unexpected = [k for k in merged if k not in owned]
        if missing or unexpected:
            lines = []
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(lines))
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    saved = [_swap(module, name, value) for name, value in merged.items()]
    try:
        return module(*args, **(kwargs or {}))
    finally:
        for restore in reversed(saved):
            restore()


def stack_module_state(models):
    """``(params, buffers)``: the parameters and buffers of ``models`` (M modules of one class,
    all training or all evaluating) stacked along a new first dim, by their ``state_dict``
    names, for :func:`vmap` over :func:`functional_call` (model ensembling). Stacked
    parameters are new leaves that require grad, unrelated to the models' own.
    RuntimeError, as torch's, for no models, mixed modes or classes, or a tensor that requires
    grad in some models only. Source: https://pytorch.org/docs/stable/generated/torch.func.stack_module_state.html"""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    return tuple({name: _stacked_leaf([dict(getattr(m, kind)())[name] for m in models], name)
                  for name, _ in getattr(models[0], kind)()} for kind in ("named_parameters", "named_buffers"))


def _stacked_leaf(tensors, name):
    grads = {t.requires_grad for t in tensors}
    if len(grads) != 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack(tensors)
    return out.detach().requires_grad_() if grads == {True} else out


def _swap(module, name, value):
    """Puts ``value`` at the dotted ``name`` of ``module``; returns the function undoing it."""
    owner_name, _, attr = name.rpartition(".")
    owner = module.get_submodule(owner_name) if owner_name else module
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            old = table[attr]
            table[attr] = value

            def restore(table=table, old=old):
                table[attr] = old
            return restore
    missing = object()
    old = owner.__dict__.get(attr, missing)
    object.__setattr__(owner, attr, value)

    def restore_attribute():
        if old is missing:
            owner.__dict__.pop(attr, None)
        else:
            object.__setattr__(owner, attr, old)
    return restore_attribute


# ---- differentiation ---------------------------------------------------------------------------
def _prepare(leaves):
    """Leaves to differentiate with respect to: detached copies that require grad, or the
    leaves themselves when they already take part in an outer transform's graph."""
    nested = any(x.requires_grad for x in leaves)
    return [x if x.requires_grad else x.detach().requires_grad_(True) for x in leaves], nested


def _argnums(argnums, args, name):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not -len(args) <= n < len(args):
            raise RuntimeError(f"Got argnums={argnums} but only {len(args)} positional inputs")
    return nums


def _with_inputs(args, argnums, name):
    """(args with the differentiated ones replaced, their leaves, how to rebuild the result
    shaped like the argument(s), whether an outer graph is being kept)."""
    nums = _argnums(argnums, args, name)
    args = list(args)
    all_leaves, rebuilders = [], []
    for n in nums:
        leaves, rebuild = _flatten(args[n])
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(f"{name}(f)(*args): Expected all inputs to be Tensors, got {type(leaf)}")
        rebuilders.append((len(leaves), rebuild))
        all_leaves.extend(leaves)
    prepared, nested = _prepare(all_leaves)
    i = 0
    for n, (count, rebuild) in zip(nums, rebuilders):
        args[n] = rebuild(prepared[i:i + count])
        i += count

    def shaped(values):
        out, j = [], 0
        for count, rebuild in rebuilders:
            out.append(rebuild(values[j:j + count]))
            j += count
        return out[0] if isinstance(argnums, int) else tuple(out)
    return args, prepared, shaped, nested


def _finish(value, nested):
    """Results detached at the outermost transform, kept differentiable inside another."""
    if nested:
        return value
    leaves, rebuild = _flatten(value)
    return rebuild([x.detach() if isinstance(x, Tensor) else x for x in leaves])


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of the scalar ``func`` with respect to argument(s) ``argnums``
    (gradients shaped like those arguments, pytrees included); with ``has_aux``, ``func``
    returns ``(value, aux)`` and the result is ``(gradient, (value, aux))``."""
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, leaves, shaped, nested = _with_inputs(args, argnums, "grad_and_value")
            output = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.ndim != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                                   f"got tensor with {output.ndim} dims. Maybe you wanted to use the vjp or "
                                   "jacrev APIs instead?")
            grads = _autograd_grad(output, leaves, create_graph=True, allow_unused=True) \
                if output.requires_grad else (None,) * len(leaves)
            grads = [x.new_zeros(x.shape) if g is None else g for g, x in zip(grads, leaves)]
        result = _finish(shaped(grads), nested)
        value = _finish(output, nested)
        return (result, (value, _finish(aux, nested))) if has_aux else (result, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of the scalar ``func`` with respect to argument(s) ``argnums``
    (``(gradient, aux)`` with ``has_aux``). RuntimeError when ``func`` does not return a
    scalar tensor."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` returns the vector-Jacobian products
    for every primal, a tuple (cotangents shaped like the output)."""
    with enable_grad():
        args, leaves, shaped, nested = _with_inputs(primals, tuple(range(len(primals))), "vjp")
        output = func(*args)
        aux = None
        if has_aux:
            output, aux = output
    out_leaves, _ = _flatten(output)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        tangent_leaves, _ = _flatten(cotangents)
        with enable_grad():
            pairs = [(o, c) for o, c in zip(out_leaves, tangent_leaves) if o.requires_grad]
            grads = _autograd_grad([o for o, _ in pairs], leaves, [c for _, c in pairs], retain_graph=True,
                                   create_graph=nested if create_graph is None else create_graph,
                                   allow_unused=True) if pairs else (None,) * len(leaves)
        grads = [x.new_zeros(x.shape) if g is None else g for g, x in zip(grads, leaves)]
        return _finish(shaped(grads), nested)
    result = (_finish(output, nested), vjp_fn)
    return result + (_finish(aux, nested),) if has_aux else result


_JVP = "jvp(f, primals, tangents)"


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product, shaped like the output;
    ``tangents`` shaped like ``primals`` (a tuple, pytrees inside). With ``has_aux``, ``func``
    returns ``(output, aux)`` and the result is ``(output, product, aux)``. Computed as
    ``d/du <vjp(u), tangents>`` (reverse mode twice). RuntimeError, as torch's, when
    ``primals`` is not a tuple or ``tangents`` has another structure or shapes."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_primals, _ = _flatten(primals)
    flat_tangents, _ = _flatten(tangents)
    if not isinstance(tangents, tuple) or len(flat_tangents) != len(flat_primals):
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be.")
    for p, t in zip(flat_primals, flat_tangents):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same shape, got {tuple(p.shape)} "
                               f"and {tuple(t.shape)}")
    with enable_grad():
        args, leaves, _, nested = _with_inputs(primals, tuple(range(len(primals))), "jvp")
        output = func(*args)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(f"{_JVP}: output of function f should be a tuple: (output, aux) if has_aux is True")
            output, aux = output
        out_leaves, rebuild = _flatten(output)
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{_JVP}: expected f(*args) to return only tensors, got unsupported type {type(o)}")
        dummies = [o.new_zeros(o.shape).requires_grad_(True) for o in out_leaves]
        live = [(o, u) for o, u in zip(out_leaves, dummies) if o.requires_grad]
        vjps = _autograd_grad([o for o, _ in live], leaves, [u for _, u in live], create_graph=True,
                              allow_unused=True) if live else (None,) * len(leaves)
        pairs = [(g, t) for g, t in zip(vjps, flat_tangents) if g is not None and g.requires_grad]
        products = _autograd_grad([g for g, _ in pairs], dummies, [t for _, t in pairs], create_graph=nested,
                                  allow_unused=True) if pairs else (None,) * len(dummies)
        products = [o.new_zeros(o.shape) if p is None else p for p, o in zip(products, out_leaves)]
    result = (_finish(output, nested), _finish(rebuild(products), nested))
    return result + (_finish(aux, nested),) if has_aux else result


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product at
    ``primals`` (:func:`jvp`'s second result), for tangents shaped like ``primals``."""
    output, _ = jvp(func, primals, tuple(_zeros_like_tree(p) for p in primals))

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def _zeros_like_tree(tree):
    leaves, rebuild = _flatten(tree)
    return rebuild([x.new_zeros(x.shape) for x in leaves])


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` with respect to argument(s) ``argnums``: for an output ``y``
    and an argument ``x``, shape ``y.shape + x.shape`` (nested like the outputs, then like the
    arguments), one vector-Jacobian product per output element."""
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, leaves, shaped, nested = _with_inputs(args, argnums, "jacrev")
            output = func(*args, **kwargs)
            aux = None
            if has_aux:
                output, aux = output
            out_leaves, rebuild_output = _flatten(output)
            blocks = []
            for y in out_leaves:
                rows = [[] for _ in leaves]
                flat = y.reshape(-1)
                for k in range(flat.numel()):
                    grads = _autograd_grad(flat[k], leaves, retain_graph=True, create_graph=True,
                                           allow_unused=True) if y.requires_grad else (None,) * len(leaves)
                    for j, (g, x) in enumerate(zip(grads, leaves)):
                        rows[j].append(x.new_zeros(x.shape) if g is None else g)
                jac = [stack(r).reshape(tuple(y.shape) + tuple(x.shape)) if r else
                       x.new_zeros(tuple(y.shape) + tuple(x.shape)) for r, x in zip(rows, leaves)]
                blocks.append(shaped(jac))
        result = _finish(rebuild_output(blocks), nested)
        return (result, _finish(aux, nested)) if has_aux else result
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian as ``jacrev`` gives it (ember computes it in reverse mode)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """The Hessian of ``func``: ``jacfwd(jacrev(func))``."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- vmap ------------------------------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dimension of its inputs: ``in_dims`` says which dim of each
    argument is the batch (an int for all, None for an argument passed whole, or one entry per
    argument), ``out_dims`` where the batch goes in each output. ``randomness``: ``"error"``
    (a random op inside raises RuntimeError), ``"same"`` (every element draws the same
    numbers) or ``"different"``. ValueError when the mapped sizes differ."""
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")

    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap(func, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has structure {len(dims)} but inputs has structure "
                             f"{len(args)}.")
        mapped = []  # (argument index, leaves, rebuild, dim)
        sizes = []
        for i, (arg, dim) in enumerate(zip(args, dims)):
            if dim is None:
                continue
            leaves, rebuild = _flatten(arg)
            for leaf in leaves:
                if not isinstance(leaf, Tensor):
                    raise ValueError(f"vmap(func, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input "
                                     f"but the input is of type {type(leaf)}. We cannot vmap over non-Tensor "
                                     "arguments, please use None as the respective in_dim")
                if not -leaf.ndim <= dim < max(leaf.ndim, 1) or leaf.ndim == 0:
                    raise ValueError(f"vmap(func, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some input, "
                                     f"but that input is a Tensor of dimensionality {leaf.ndim} so expected in_dim "
                                     f"to satisfy -{leaf.ndim} <= in_dim < {leaf.ndim}.")
                sizes.append(leaf.shape[dim])
            mapped.append((i, leaves, rebuild, dim))
        if not mapped:
            raise ValueError(f"vmap(func, in_dims={in_dims}, ...)(<inputs>): Got in_dims={in_dims} but none of the "
                             "inputs are Tensors to be vmapped over")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        generator = _random.default_generator
        start = generator.get_state() if randomness != "different" else None
        results = []
        for b in range(sizes[0]):
            call = list(args)
            for i, leaves, rebuild, dim in mapped:
                call[i] = rebuild([leaf.select(dim, b) for leaf in leaves])
            if randomness == "same":
                generator.set_state(start)
            results.append(func(*call, **kwargs))
            if randomness == "error" and not _same_state(generator.get_state(), start):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        leaves_per_call = [_flatten(r) for r in results]
        rebuild_output = leaves_per_call[0][1]
        outs = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(leaves_per_call[0][0])
        stacked = []
        for k, dim in enumerate(outs):
            column = [leaves[k] for leaves, _ in leaves_per_call]
            if not isinstance(column[0], Tensor):
                raise ValueError(f"vmap({getattr(func, '__name__', func)}, ...): `{getattr(func, '__name__', func)}` "
                                 f"must only return Tensors, got type {type(column[0])}. Did you mean to set "
                                 "out_dims= to None for output?")
            stacked.append(stack(column, dim))
        return rebuild_output(stacked)
    return wrapper


def _same_state(a, b):
    return a.shape == b.shape and bool((a == b).all())
