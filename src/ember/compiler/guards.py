"""Guards: what a captured graph assumed about the world, checked before each replay.

A graph is valid while the same things hold as when it was recorded: the inputs' shapes, dtypes and
``requires_grad``; grad mode; the autocast dtype; each reachable module's train/eval flag; which parameter objects
the modules and optimizers hold (with their shapes and dtypes); which of them have a ``.grad``; each optimizer's
hyperparameters and state; which tensors the globals, closure cells and argument objects it reads hold, with their
shapes, and which functions (rebinding ``W = ...`` or ``helper = ...`` recompiles, as torch's guards); the memory
layouts of all those tensors (:mod:`.layouts`). :func:`snapshot` lists these as ``(name, value)`` pairs; two
snapshots are compared pair by pair, so a failed guard is named. The objects looked at are found from the function
itself: its arguments, ``self`` of a bound method, a ``functools.partial``'s arguments, a callable object's
attributes, its closure and the globals its code names, and those of the user functions found there: the ones it
calls, the ``forward`` of the modules it reaches and their hooks (torch's guards follow the same sources, through
the functions dynamo inlines). Containers are compared item by item, with the containers in them
(:func:`~.contents.flat`); one too large to compare on every call makes the function run eagerly. Inputs that
overlap in memory without being one array (views of one tensor) are a guard too (:func:`~.contents.sharing`), as
are the types of the ``TorchFunctionMode`` objects on (:func:`~.._tensor_subclass.torch_function_state`).
"""
import functools
import inspect
import types
from collections import deque

from .._dtype import get_default_dtype
from .._tensor import Tensor
from .._tensor_subclass import torch_function_state
from ..amp import autocast_mode as _autocast
from ..autograd.grad_mode import STATE
from ..nn.modules import module as _module
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer, step_hook_functions
from .capture import flatten
from .closure_ints import CONSTANTS, cell_ints, extra_ints
from .contents import (DEPTH, LARGE, baked, container, flat, flat_or_over, flats, function_like, held_contents, same,
                       scalar, scalar_key, sharing)
from .group_writes import BEFORE, READ
from .layouts import LAYOUTS, layout_keys
from .reads import _MISSING, _class_values, _defaults, _read, class_attributes, reads_hold
from .side_effects import global_names, plain_object, unread_attributes, user_class, user_code
from .input_grads import input_facts
from .sources import ATTRIBUTES
from .guard_checks import bind, first_difference, holds, input_name, with_patterns

__all__ = ["World", "snapshot", "holds", "bind", "first_difference", "with_patterns", "object_tensors",
           "optimizer_facts", "constants", "code_ids", "reads_hold", "hook_ids"]

class World:
    """The modules, optimizers, parameters and input tensors a call can touch.

    Finding the modules and optimizers walks the function's closure and globals (and those
    of the user functions found there) and every submodule. A call after ``previous`` re-reads
    only what that walk read (closure cells, globals, the containers read: the same objects give
    the same roots) and, while no module changed (``nn.modules.module.STATE_VERSION``, the plain
    lists and dicts modules hold), reuses the modules found and the facts read of them."""

    def __init__(self, fn, args, kwargs, previous=None, held=()):
        """``held``: tensors objects hold that a dynamic shape spec declares (its ``held``):
        inputs too, after the arguments' tensors."""
        self.fn, self.held = fn, held
        if kwargs or any([type(a) is not Tensor for a in args]):
            self.inputs = flatten((args, kwargs)) + [h[3] for h in held]
        else:  # tensors only (or no arguments): they are the inputs
            self.inputs = [*args, *[h[3] for h in held]]
        same_fn = previous is not None and previous.fn is fn
        # what the function reads from closures and globals: the same objects as the last call's
        # when each closure cell and global it read (and each container it looked into, and the
        # class of a callable object: its ``__call__``) still holds the same object; then so is
        # what it found there (and while no module changed: the forwards and hooks followed are the modules')
        if same_fn and previous.version == _module.STATE_VERSION[0] and reads_hold(previous.reads):
            self.source, self.reads, free = previous.source, previous.reads, previous.read_values
        else:
            self.source, self.reads = _source(fn), []
            if isinstance(fn, functools.partial):  # (``p.keywords["k"] = 5``: read again at each call)
                self.reads.append((_partial_values, (fn,), _partial_values(fn)))
            free = list(_free_roots(self.source, self.reads))
        if any([isinstance(o, Optimizer) for o in args]):  # an optimizer passed: what its step hooks read
            free = free + [v for o in args if isinstance(o, Optimizer) for v in _optimizer_values(o, set(), [])]
        self.read_values = free
        self.arguments = (*args, *kwargs.values())
        # the ints in the function's closure cells, and those derived: positions after the arguments (closure_ints.py)
        self.cells = cell_ints(fn)
        self.positions = (*self.arguments, *extra_ints(fn, self.arguments))
        if same_fn and free is previous.read_values and same(self.arguments, previous.arguments):
            self.kinds = previous.kinds
        else:
            self.kinds = _kinds(self.arguments, free)
        self.roots, scalars, functions, tensors, objects, containers = self.kinds
        # Python values read from the closure and globals: a graph has them baked in
        self.constants = constants(scalars)
        # the functions it calls from there: a rebound ``helper = ...`` is another program
        self.codes = code_ids(functions)
        # what the roots hold (a module swapped into a global list or object), see flat()
        # (kept, so that no other object takes their ids while this world is the last one)
        self.members, too_large = flats(containers)
        # a container too large (or too deep) to compare on every call: the function runs eagerly (a graph break)
        self.unguarded = None if too_large is None else (
            f"the function reads a {type(too_large).__name__} of {len(getattr(too_large, '__dict__', too_large))} items (with the containers "
            f"in it, over {LARGE} or over {DEPTH} levels deep): too large to guard on every call, so it runs eagerly")
        self.key = tuple(map(id, self.roots)) + tuple(map(id, self.members))
        # the modules' state changes only through their counted tables and __setattr__ (and the
        # plain lists and dicts they hold, compared here): unchanged, the walk and what it read stand
        self.version, self.trainings = _module.STATE_VERSION[0], _module.TRAINING_VERSION[0]
        if same_fn and previous.key == self.key and previous.version == self.version and previous.held_same():
            self.modules, self.optimizers = previous.modules, previous.optimizers
            self.all_modules, self.tables = previous.all_modules, previous.tables
            self.module_facts, self.module_tensors, self.held_lists, self.unread = \
                previous.module_facts, previous.module_tensors, previous.held_lists, previous.unread
        else:
            self._walk()
        # tensors read from the closure, globals, argument objects' and modules' plain attributes:
        # a graph holds them, rebinding one is a new graph
        self.free = tensors + object_tensors(objects, self.unread) + self.module_tensors[1]
        if held:
            inputs = {id(h[3]) for h in held}
            self.free = [t for t in self.free if id(t) not in inputs]
        tensors = self.module_tensors[0] + [p for opt in self.optimizers for group in opt.param_groups
                                            for p in group["params"]]
        tensors += [t for t in self.free if t.requires_grad and t.grad_fn is None]  # leaves get .grad too
        self.params = list({id(t): t for t in tensors if t is not None}.values())  # first occurrence order

    def _walk(self):
        self.modules, self.optimizers, seen = [], [], set()

        def visit(obj, depth=0):
            if id(obj) in seen:
                return
            if isinstance(obj, Module):
                seen.add(id(obj))
                self.modules.append(obj)
            elif isinstance(obj, Optimizer):
                seen.add(id(obj))
                self.optimizers.append(obj)
            elif depth == 0 and isinstance(obj, (list, tuple)):
                for v in obj:
                    visit(v, 1)
            elif depth == 0 and isinstance(obj, dict):
                for v in obj.values():
                    visit(v, 1)
            elif depth == 0 and plain_object(obj):
                for v in vars(obj).values():
                    visit(v, 1)
        for obj in self.roots:
            visit(obj)
        # with the modules a module keeps in plain lists, tuples and dicts (not registered,
        # but called: their train/eval flag and parameters matter as much)
        roots = self.modules + [v for root in self.modules for sub in root.modules() for v in _listed_modules(sub)]
        modules = self.all_modules = list({id(m): m for root in roots for m in root.modules()}.values())
        for opt in [v for m in modules for v in vars(m).values() if isinstance(v, Optimizer)]:
            visit(opt)  # and the optimizers they hold (forward-forward's layers: ``self.opt = Adam(...)``)
        self.tables = [table for m in modules for table in (m._parameters, m._buffers)]
        # attributes no code of the call names are not guarded (see unread_attributes), of the modules and of
        # the plain objects read (a list of tensors ``self`` holds, one of them passed in, aliases nothing read)
        unread = self.unread = unread_attributes([*modules, *self.kinds[4]], [self.source[1], *self.kinds[2]])
        self.module_tensors = ([t for table in self.tables for t in table.values()],
                               [t for m in modules for t in _tensor_attributes(m, unread)])
        self.module_facts = [
            ("module structure", tuple([id(c) for m in modules for c in (*m._modules.values(), *_listed_modules(m))])),
            ("training (train/eval) of the modules", tuple([m.training for m in modules])),
            (ATTRIBUTES,
             tuple([tuple([(k, baked(v)) if scalar(v) or container(v) else (k, "is", id(v))
                           for k, v in vars(m).items()
                           if scalar(v) or container(v) and type(v) not in _COUNTED and k not in _TABLE_MARKS
                           or _called(m, v)])
                    for m in modules])),
            ("module hooks", _hooks(modules))]
        # the plain lists, dicts and objects the modules hold (a table set by hand to a plain dict too, a config
        # object): compared on every call, where the counted tables and hooks count their own writes
        self.held_lists = [(v, held_contents(v)) for m in modules for k, v in vars(m).items()
                           if k not in unread and (isinstance(v, (list, deque, dict, set)) or plain_object(v)) and type(v) not in _COUNTED
                           and k not in _TABLE_MARKS]

    def held_same(self):
        """Whether the plain lists and dicts the modules hold still hold what the walk found
        (also in the containers they hold, see :func:`~.contents.flat`)."""
        return all([same(held_contents(v), then) for v, then in self.held_lists])

    def overlapping(self, written):
        """The pairs of the inputs', tensors read and parameters' positions whose arrays are different
        but overlap in memory (views of one tensor, :func:`~.contents.sharing`), one of them ``written``."""
        shared, arrays = _aliases(self), [id(t._data) for t in (*self.inputs, *self.free, *self.params)]
        return () if shared is None else [(i, j) for i, j in shared[1] if {arrays[i], arrays[j]} & written]

    def param_names(self):
        """The parameters' and buffers' qualified names (``fc1.weight``), ``param`` for the
        optimizers' tensors that belong to no reachable module."""
        names = {}
        for m in self.modules:
            for name, t in (*m.named_parameters(), *m.named_buffers()):
                names.setdefault(id(t), name)
        return [names.get(id(p), "param") for p in self.params]


def _listed_modules(module):
    """Modules ``module`` holds in plain list, tuple or dict attributes (``_modules`` aside)."""
    for k, v in vars(module).items():
        if k != "_modules" and isinstance(v, (list, tuple, dict)):
            yield from (m for m in (v.values() if isinstance(v, dict) else v) if isinstance(m, Module))


def constants(values):
    """What a graph may have baked in of the Python ``values`` it read (see :func:`~.contents.baked`)."""
    return tuple([baked(o) for o in values])


def code_ids(functions):
    """The ids of the code objects ``functions`` run (a rebound ``helper = ...`` is another program)."""
    return tuple([id(getattr(o, "__func__", o).__code__) for o in functions])


def _tensor_attributes(module, unread):
    """Tensors a module holds as plain attributes (not parameters or buffers), also in lists
    and plain objects, but under the names in ``unread``."""
    for k, v in vars(module).items():
        if k in unread:
            continue
        if isinstance(v, Tensor):
            yield v
        elif (isinstance(v, (list, tuple)) or plain_object(v)) and type(v) not in _COUNTED:
            yield from (t for t in flat(v) or () if isinstance(t, Tensor))


def _hooks(modules):
    """The ids of the module hooks that run: global, then each module's."""
    return (tuple(_module._global_forward_pre_hooks), tuple(_module._global_forward_hooks),
            tuple([(tuple(m._forward_pre_hooks), tuple(m._forward_hooks), tuple(m._backward_pre_hooks),
                    tuple(m._backward_hooks)) for m in modules]))


_COUNTED = (_module._Table, _module._Hooks)


def _called(module, value):
    """A function-like attribute of ``module`` (:func:`~.contents.function_like`: ``self.act =
    torch.sigmoid``, a lambda): guarded as itself, but for ``module.compile()``'s ``forward``
    (the compiled wrapper of the module's own method: the code compiled)."""
    return function_like(value) and getattr(getattr(value, "_fn", None), "__self__", None) is not module


# a module's marks of its hooks (with_kwargs, always_call) and of its non-persistent buffers:
# written with the hook and buffer tables, which count their writes
_TABLE_MARKS = ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_non_persistent_buffers_set")


def _source(fn):
    """``(the objects bound to the function, the unwrapped function, the global names its code
    reads or None where it has no code)``: found once per compiled function, not per call. The
    objects bound are ``self`` of a bound method, a ``functools.partial``'s arguments and
    keywords, and a callable object itself (whose ``__call__`` is then the function)."""
    bound = _partial_values(fn)
    while isinstance(fn, functools.partial):
        fn = fn.func
    if getattr(fn, "__self__", None) is not None:
        bound.insert(0, fn.__self__)
    inner = inspect.unwrap(getattr(fn, "__func__", fn))
    if not isinstance(inner, types.FunctionType) and user_code(getattr(type(inner), "__call__", None)):
        bound.insert(0, inner)  # a callable object: what it reads is its own attributes and its __call__'s
        inner = type(inner).__call__
    code = getattr(inner, "__code__", None)
    return tuple(bound), inner, None if code is None else _global_names(code)


def _partial_values(fn):
    """The arguments and keywords bound by ``fn``, a ``functools.partial`` (of partials)."""
    bound = []
    while isinstance(fn, functools.partial):
        bound += [*fn.args, *fn.keywords.values()]
        fn = fn.func
    return bound


@functools.lru_cache(maxsize=256)
def _global_names(code):
    return tuple(dict.fromkeys(global_names(code)))


def _kinds(arguments, free):
    """The roots (arguments, then ``free``: what the function read) sorted by what the guards
    read of them: ``(roots but tensors, values baked in, functions, tensors read (also in the
    containers read), plain objects, containers and plain objects)``."""
    roots = [o for o in (*arguments, *free) if not isinstance(o, Tensor)]  # kept: ids stay unique
    objects = [o for o in roots if plain_object(o)]
    # with the tensors in the lists, tuples, dicts and sets read (``params["w"]``): fixed sources
    # of a graph as much as a tensor read by name
    listed = [v for o in free if isinstance(o, (list, tuple, deque, dict, set)) for v in flat(o) or ()
              if isinstance(v, Tensor)]
    # (function-like objects other than Python functions, a built-in or a ``functools.partial``
    # or a class's staticmethod, are baked as themselves)
    python = (types.FunctionType, types.MethodType)
    return (roots, [o for o in free if scalar(o) or container(o) or function_like(o) and not isinstance(o, python)],
            [o for o in free if isinstance(o, python)], [o for o in free if isinstance(o, Tensor)] + listed, objects,
            [o for o in roots if isinstance(o, (list, tuple, deque, dict, set))] + objects)


def _free_roots(source, reads):
    """The objects bound to the function (see :func:`_source`), then what it reads (:func:`_free_values`)."""
    bound, fn, names = source
    seen = {id(fn)}
    yield from bound
    for value in bound:
        if isinstance(value, Module):
            yield from _module_values(value, seen, reads)
        elif callable(value) and plain_object(value):  # the compiled callable object
            yield from _call_of(value, reads)
    if names is None:  # no code to read: the object itself
        yield fn
        return
    yield from _free_values(fn, names, seen, reads)


def _free_values(fn, names, seen, reads):
    """What ``fn`` reads from its closure and globals, and what the user functions it reaches
    there read in turn (``step`` calling ``loss``, whose closure holds the model), as torch's
    dynamo follows the functions it inlines. Library functions (ember's, NumPy's) hold no
    user state and are not looked into. Each read is appended to ``reads`` (see :func:`reads_hold`)."""
    cells, globals_ = fn.__closure__ or (), fn.__globals__
    values = _read(cells, globals_, names)
    reads.append((_read, (cells, globals_, names), values))
    defaults = _defaults(fn)
    if defaults:  # ``def step(x, model=model, opt=opt)``: read where a call leaves them out
        reads.append((_defaults, (fn,), defaults))
        values = values + defaults
    for value in values:
        if value is _MISSING:
            continue
        yield value
        # with the functions a list or dict holds (branches of a switch); each read on every call
        if isinstance(value, (list, tuple, deque, dict, set)):
            items = flat_or_over(value)
            reads.append((flat_or_over, (value,), items))
        else:
            items = (value,)
        for item in items:
            inner = getattr(item, "__func__", item)
            if callable(item) and plain_object(item):  # a callable object: its __call__ runs
                inner = type(item).__call__
                yield from _call_of(item, reads)
            if isinstance(item, types.MethodType):
                yield item.__self__
            if isinstance(item, type) and id(item) not in seen and user_class(item):  # ``Config.scale``
                seen.add(id(item))
                yield from class_attributes(item, reads)
            if isinstance(item, Module) and id(item) not in seen:
                yield from _module_values(item, seen, reads)
            elif isinstance(item, Optimizer) and id(item) not in seen:
                yield from _optimizer_values(item, seen, reads)
            elif id(inner) not in seen and user_code(inner):
                seen.add(id(inner))
                if item is not value:
                    yield item
                yield from _free_values(inner, _global_names(inner.__code__), seen, reads)


def _call_of(obj, reads):
    """The ``__call__`` a callable object runs, as a function called (its code is guarded), its
    user classes' attributes read on every call: one rebound after compiling (``M.__call__ =
    ...``) is another program, as torch's guards on the type's ``__call__`` see."""
    for cls in type(obj).__mro__:
        if user_class(cls):
            reads.append((_class_values, (cls,), _class_values(cls)))
    yield type(obj).__call__


def _module_values(module, seen, reads):
    """What the user code a call of ``module`` runs reads (see :func:`_free_values`): the
    ``forward`` of its and its submodules' classes, their hooks and the global module hooks
    (a global a forward or a hook reads is guarded as one the function reads), and the Python
    values the user classes hold (class attributes, read on every call)."""
    seen.add(id(module))
    roots = [module, *_listed_modules(module)]
    functions = [type(m).forward for root in roots for m in root.modules()]
    functions += [h for root in roots for m in root.modules() for table in (
        m._forward_pre_hooks, m._forward_hooks, m._backward_pre_hooks, m._backward_hooks) for h in table.values()]
    functions += [*_module._global_forward_pre_hooks.values(), *_module._global_forward_hooks.values()]
    for f in functions:
        inner = getattr(f, "__func__", f)
        if id(inner) not in seen and user_code(inner):
            seen.add(id(inner))
            yield from _free_values(inner, _global_names(inner.__code__), seen, reads)
    # the Python values the user classes hold (``scale = 2.0`` read as ``self.scale``)
    for cls in dict.fromkeys([c for root in roots for m in root.modules() for c in type(m).__mro__]):
        if id(cls) not in seen and user_class(cls):
            seen.add(id(cls))
            yield from class_attributes(cls, reads)


def _optimizer_values(optimizer, seen, reads):
    """What the user's step hooks of ``optimizer`` read (see :func:`_free_values`): a hook that
    counts steps in a list is a side effect a replay would skip (a graph break)."""
    seen.add(id(optimizer))
    hooks = step_hook_functions(optimizer)
    reads.append((step_hook_functions, (optimizer,), hooks))
    for f in hooks:
        inner = getattr(f, "__func__", f)
        if id(inner) not in seen and user_code(inner):
            seen.add(id(inner))
            yield from _free_values(inner, _global_names(inner.__code__), seen, reads)


def snapshot(world, args, kwargs):
    """The guarded facts as ``(name, value)`` pairs, in a fixed order for a given world."""
    params = world.params
    facts = [("grad_mode", STATE.enabled), ("default dtype", get_default_dtype()),
             ("autocast dtype (none: autocast off)", _autocast.AUTOCAST.dtype),
             ("TorchFunctionMode stack (types) and DisableTorchFunction[Subclass]", torch_function_state())]
    # (a Tensor subclass's class too: its graph returns its class's tensors, a plain one's plain ones)
    facts += [(input_name(i), (t._data.shape, t.dtype, t.requires_grad) if type(t) is Tensor else
               (t._data.shape, t.dtype, t.requires_grad, type(t))) for i, t in enumerate(world.inputs)]
    facts += input_facts(world.inputs)  # (which have a .grad, gradient hooks: sources.relevant)
    declared = {id(h[1]) for h in world.held}  # objects whose tensors are inputs: by type and contents
    for i, value in enumerate((*args, *kwargs.values())):
        if not isinstance(value, (Tensor, list, tuple, dict)):
            facts.append((f"argument {i}", scalar_key(value) if scalar(value) else type(value) if id(value) in declared
                          else id(value)))
        if container(value):
            facts.append((f"argument {i} (Python values inside)", baked(value)))
    facts += [(f"argument {k}", world.positions[k]) for k in range(len(world.arguments), len(world.positions))]
    facts.append(("argument count and keyword names", (len(args), tuple(kwargs))))
    facts.append((CONSTANTS, world.constants))
    facts.append(("functions called from globals and closures (code identity)", world.codes))
    facts.append(("tensors read from globals, closures and argument objects (identity, shape, dtype, "
                  "requires_grad)", tuple([(id(t), t._data.shape, t.dtype, t.requires_grad) for t in world.free])))
    facts += world.module_facts
    ids, metas, grads = [], [], []
    for p in params:  # one pass (a training loop reads these on every call)
        ids.append(id(p))
        metas.append((p._data.shape, p.dtype, p.requires_grad))
        grads.append(p.grad is not None)
    facts += [("parameter identity", tuple(ids)), ("parameters (shape, dtype, requires_grad)", tuple(metas)),
              ("which parameters have .grad", tuple(grads)),
              ("which parameters have gradient hooks (hook ids)", tuple(map(hook_ids, params)))]
    facts.append(("inputs, globals/closures' tensors and parameters that are one array", _aliases(world)))
    facts.append((LAYOUTS, layout_keys([*world.inputs, *world.free, *params])))
    for k, opt in enumerate(world.optimizers):
        params, hyper, state = optimizer_facts(opt)
        facts += [(f"optimizer {k} parameters (identity, by group)", params),
                  (("values read of " if opt in READ else "") + f"optimizer {k} hyperparameters", hyper),
                  (f"optimizer {k} state", state),
                  (f"optimizer {k} step hooks (global and its own)", tuple(map(id, step_hook_functions(opt))))]
    return facts


def read_groups(facts, optimizers):
    """``facts`` (made before a recording, or after it: ``read_floats``' lifted floats) with the hyperparameters of the
    ``optimizers`` it read guarded by value at the call's start (``group_writes.BEFORE``), named so for ``sources.relevant``."""
    read = {f"optimizer {k} hyperparameters": (opt, BEFORE.get(opt)) for k, opt in enumerate(optimizers) if opt in READ}
    return [("values read of " + m, optimizer_facts(*read[m])[1]) if (m := n.removeprefix("values read of ")) in read else (n, v)
            for n, v in facts]


def hook_ids(tensor):
    """The ids of the hooks on a leaf's gradient (``register_hook``: its AccumulateGrad node's),
    or None where it has none: a graph that ran backward has the hooks of its capture baked in."""
    node = tensor._node
    if node is None or not (node._pre_hooks or node._hooks):
        return None
    return tuple(node._pre_hooks or ()), tuple(node._hooks or ())


def object_tensors(objects, unread=frozenset()):
    """The tensors plain objects hold as attributes (read on every call: nothing counts their writes),
    also in their containers, but under the names in ``unread`` (no code of the call names them:
    :func:`~.side_effects.unread_attributes`)."""
    if not unread:
        return [v for o in objects for v in flat(o) or () if isinstance(v, Tensor)]
    return [v for o in objects for k, a in vars(o).items() if k not in unread
            for v in ((a,) if isinstance(a, Tensor) else flat(a) or () if container(a) else ()) if isinstance(v, Tensor)]


def optimizer_facts(opt, groups=None):
    """``(parameters, hyperparameters, state)`` of an optimizer as guarded: the ids of each
    group's parameters (one taken out of the optimizer is no longer updated, though its module still
    holds it), each group's other entries (of ``groups``, copies, where given), and how many entries each
    parameter's state has. The graph's inputs by value too once the user's code read one (``group_writes.READ``)."""
    inputs, groups = () if opt in READ else _input_keys(type(opt)), opt.param_groups if groups is None else groups
    hyper = tuple([tuple([(key, (v == 0 if key in inputs else v) if type(v) in _PLAIN else _hyperparameter(v, key in inputs))
                          for key, v in g.items() if key != "params"]) for g in groups])
    # state is made for all parameters with a gradient on the first step: its sizes tell
    return (tuple([tuple(map(id, g["params"])) for g in opt.param_groups]), hyper, tuple(map(len, opt.state.values())))


def _aliases(world):
    """Which of the inputs, the tensors read from globals and closures and the parameters are
    the same array (one tensor passed as two arguments, a global passed in), see :func:`~.contents.sharing`.
    A capture finds an array at its first source (``sources.known_arrays``), so a call aliasing
    otherwise is another program (as torch's dynamo guards duplicate inputs)."""
    return sharing([t._data for t in (*world.inputs, *world.free, *world.params)])


@functools.lru_cache(maxsize=None)
def _input_keys(optimizer_class):
    """The group keys an optimizer's update op takes as graph inputs (``hyperparameters``)."""
    return {key if type(key) is str else key[0] for key in optimizer_class.hyperparameters}


_PLAIN = {float, int, bool, str, type(None)}


def _hyperparameter(value, is_input):
    """A group entry as guarded: of one the graph reads as an input (``is_input``), whether it is zero
    (its value may change without a recompile; a zero term is left out of the kernels); of any
    other, its value, a 0-d tensor (which a scheduler updates in place) by its number; a tuple item by item."""
    if type(value) is tuple:
        return tuple([_hyperparameter(v, is_input) for v in value])
    if isinstance(value, Tensor):
        value = value._data.item()
    return value == 0 if is_input else value
