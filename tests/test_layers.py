"""The layer order of DESIGN.md holds: every module-level import between ember's packages
runs downward (or within a layer), there is no ``import *`` in the source, no import of an
ember module hides inside a function to dodge a cycle, and no module writes a name into
another module (an injected global is an import edge the graph cannot see).

The source is parsed with ``ast`` (nothing is imported), so a violation is reported as
``file:line`` with the edge it makes. The exceptions are listed in the allow-lists below, each
with the reason it is there (an entry that no longer matches fails the test, so the lists
stay exact).
"""
import ast
import functools
import pathlib
import sys

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "ember"

# DESIGN.md's layers (docs/design.md's table), highest first. A module belongs to the longest
# prefix listed here; the modules DESIGN.md does not name sit beside the ones they serve (noted
# per line).
LAYERS = [
    ["ember.__main__", "ember.cli", "ember.milestones", "ember.course"],  # what a person runs
    # The models are PyTorch programs (``import ember as torch``), written to be read beside
    # torch's: they sit on the public namespace as a user's program does, and what a person
    # runs (the chat, the milestones, the course's checks) sits on them.
    ["ember.models"],
    # The curated public namespace: every layer below (``ember.nn`` and the other packages
    # load on first use, by ``ember.__getattr__``).
    ["ember"],
    ["ember.compiler", "ember._higher_order_ops", "ember.distributed", "ember.profiler", "ember.ao",
     "ember.fx", "ember.export",  # torch.fx and torch.export: the compiler's graphs as programs
     "ember._logging",  # torch._logging: which of the compiler's logs print
     "ember.multiprocessing",  # torch.multiprocessing: tensors shared between processes
     "ember.nn.parallel",  # torch.nn.parallel: DistributedDataParallel runs on ember.distributed
     "ember.autograd.profiler",  # torch.autograd.profiler: the profiler's legacy entry point
     "ember.utils.flop_counter", "ember.utils.benchmark"],  # systems observing op dispatch
    ["ember.nn", "ember.optim", "ember.distributions", "ember.utils.data", "ember.datasets",
     "ember.func",  # torch.func: function transforms, functional_call over nn modules
     "ember.serialization", "ember.text", "ember.vision",  # model-building libraries, as datasets
     "ember.hub",  # torch.hub: checkpoint files by URL, read by serialization
     "ember.utils", "ember.amp", "ember.cuda.amp", "ember.cpu", "ember.onnx",  # mixed precision: beside optim
     "ember.testing"],  # torch.testing: helpers for tests, on the public tensor API
    ["ember._tensor", "ember._tensor_autograd", "ember._tensor_conversions", "ember._tensor_extras",
     "ember._tensor_subclass",  # Tensor subclasses and __torch_function__ (torch.overrides), beside Tensor
     "ember.storage", "ember._ops",
     "ember.autograd",
     "ember.autograd.engine",
     # the ops' public functions, creation, randomness and printing sit with Tensor and _ops
     "ember._creation", "ember._spacing", "ember._sampling", "ember._random", "ember._distributions",
     "ember._meta",  # the meta device's factories and moves, beside creation
     "ember._memory", "ember._print",
     "ember._legacy", "ember._removed", "ember._dlpack", "ember.linalg", "ember.fft", "ember.functional", "ember.special", "ember.sparse", "ember._linalg_legacy", "ember.accelerator", "ember.cuda", "ember.backends",
     "ember._dtype", "ember._python_ints", "ember._device", "ember._size", "ember._layout", "ember._memory_format",
     "ember._result_layout"],  # the strides of op results (torch's TensorIterator and channels-last rules)
    ["ember.autograd.graph", "ember.autograd.grad_mode", "ember.autograd.anomaly_mode",
     "ember._dispatch_state"],  # the observers and autocast's cast, read by the ops and the engine
    ["ember._backend"],
]
HEIGHT = {prefix: len(LAYERS) - i for i, layer in enumerate(LAYERS) for prefix in layer}

# Module-level edges that run upward, each with its reason: (file, imported module). None today;
# a new entry needs a reason that moving a piece down a layer cannot answer.
UPWARD_ALLOWED = set()

# The function-level imports of ember modules, each lazy for a reason that is not a cycle:
# (file, function, imported module), DYNAMIC for an ``importlib.import_module`` call. Cycles
# are broken by moving the shared piece down a layer instead (issue 9), so a new entry here
# needs a reason of the same kind.
DYNAMIC = "<importlib.import_module>"
FUNCTION_LEVEL_ALLOWED = {
    # ``import ember`` stays light: the public namespace, ``ember.utils`` and
    # ``ember.autograd.profiler`` load their subpackages on first use (each of nn, optim,
    # utils.data, the profiler, the compiler costs 0.1-0.4 s of CPU over ``import ember``'s 1.3 s).
    ("ember/__init__.py", "__getattr__", DYNAMIC),
    ("ember/utils/__init__.py", "__getattr__", DYNAMIC),
    ("ember/autograd/__init__.py", "__getattr__", DYNAMIC),  # the profiler's, a layer above
    # A layer above, reached from a call into it: nn.parallel and DistributedSampler's default
    # world size and rank sit on ember.distributed (mpi4py: +0.3 s to import), and
    # nn.Module.compile() is torch's entry point into the compiler.
    ("ember/nn/__init__.py", "__getattr__", DYNAMIC),
    # nn.utils' fusions, skip_init and stateless sit on nn.modules and ember.func, which import
    # nn.utils (parametrize, rnn): loaded on first use, as the packages above.
    ("ember/nn/utils/__init__.py", "__getattr__", DYNAMIC),
    ("ember/utils/data/distributed.py", "__init__", "ember.distributed"),
    # mp.spawn starts one MPI job only for a program that has imported ember.distributed
    # (its processes must join one world): importing it here would make every program one.
    ("ember/multiprocessing/spawn.py", "start_processes", DYNAMIC),
    ("ember/nn/modules/module.py", "compile", "ember.compiler.eval_frame"),
    # SyncBatchNorm all-reduces over a process group only a program that imported
    # ember.distributed can have made (mpi4py: +0.3 s to import otherwise).
    ("ember/nn/modules/batchnorm.py", "_normalize", "ember.distributed.nn.functional"),
    # mode's replay of std::sort runs as C built by the compiler's toolchain (stdlib only), which
    # loads on the first slice that needs the replay, not with every ``import ember``.
    ("ember/_ops/stdsort.py", "_c_kernel", "ember.compiler.backends.toolchain"),
    # addcmul's fused multiply-add runs as C built the same way, on the first addcmul.
    ("ember/_ops/fma.py", "_c_kernels", "ember.compiler.backends.toolchain"),
    # A Timer's statement sees the public namespace as ``torch`` and ``ember``, as a user
    # program would: the top layer, which Timer (below it) reaches when it is made.
    ("ember/utils/benchmark/timer.py", "__init__", "ember"),
    # The course's grading process imports ember only after its import hook puts the student's
    # files in place (importing it earlier would load the reference), then a module's checks.
    ("ember/course/child.py", "run", "ember"),
    ("ember/course/child.py", "run", "ember.course.checks"),
    ("ember/course/child.py", "run_milestone", "ember.milestones"),
    ("ember/course/checks/__init__.py", "for_module", DYNAMIC),
}


# Writes into another module's namespace, each with its reason: (file, "module.name").
INJECTION_ALLOWED = {
    # The launcher runs the user's script as ``__main__``, with the arguments it was given
    # (what ``python script.py ARGS`` would set), as torch.distributed.run does.
    ("ember/distributed/run.py", "sys.argv"),
    # The ``ember`` command (only) re-sends a Ctrl-C that Python swallowed in a callback.
    ("ember/cli/interrupt.py", "sys.unraisablehook"),
    # (Not seen here, as it writes through a parameter: compiler/patches.patch, counted under a lock, the
    # last recording to end puts the originals back. While ember.compile records a call, the user's
    # ``print`` and writes to sys.stdout/stderr are graph breaks (a replay would not print; torch's dynamo
    # breaks there too); with a float argument traced, ``math.sqrt`` and the other functions torch's dynamo
    # traces make traced floats of it, and with an int argument traced, the built-in ``min`` and ``max`` of
    # a traced int make a traced int, torch's ``sym_min``/``sym_max``; Tensor's value methods, ``.grad``,
    # ``_make``/``_init``/``_snapshot`` and the random draws call the recordings of their own thread:
    # compiler/tensor_patches.py.)
}


def _module_name(path):
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path):
    return path.name == "__init__.py"


def _exists(name):
    base = SRC.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _targets(node, path):
    """The ember modules an import statement in ``path`` loads: ``from pkg import sub`` loads
    ``pkg.sub`` when that is a module, else ``pkg`` itself."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == "ember"]
    if node.level:
        package = _module_name(path).split(".")
        if not _is_package(path):
            package.pop()
        base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    if base.split(".")[0] != "ember":
        return []
    subs = [f"{base}.{alias.name}" for alias in node.names if _exists(f"{base}.{alias.name}")]
    return subs if len(subs) == len(node.names) else [base, *subs]


def _height(name):
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in HEIGHT:
            return HEIGHT[prefix], prefix
    raise AssertionError(f"{name} is in no layer of LAYERS: place it in tests/test_layers.py")


def _files():
    return sorted(PACKAGE.rglob("*.py"))


def _relative(path):
    return path.relative_to(SRC).as_posix()


def _module_level_imports(tree):
    """Imports that run when the module is imported: those outside any def or class."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _is_dynamic_import(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
            in ("import_module", "__import__"))


def _function_level_imports(tree):
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_dynamic_import(node):
                    yield fn.name, node


@functools.cache
def _parsed():
    return [(path, ast.parse(path.read_text(), str(path))) for path in _files()]


def upward_edges():
    """(file, line, importer, imported) for every module-level import that runs upward."""
    found = []
    for path, tree in _parsed():
        source = _module_name(path)
        height, _ = _height(source)
        for node in _module_level_imports(tree):
            for target in _targets(node, path):
                if _height(target)[0] > height:
                    found.append((_relative(path), node.lineno, source, target))
    return sorted(found)


def function_level_imports():
    """(file, line, function, imported) for every import of an ember module inside a function."""
    found = []
    for path, tree in _parsed():
        for function, node in _function_level_imports(tree):
            for target in [DYNAMIC] if isinstance(node, ast.Call) else _targets(node, path):
                found.append((_relative(path), node.lineno, function, target))
    return sorted(set(found))


def test_every_module_has_a_layer():
    for path in _files():
        _height(_module_name(path))


def test_no_module_level_import_runs_upward():
    found = upward_edges()
    unexpected = [f"{f}:{line}: {src} imports {dst} (a higher layer)"
                  for f, line, src, dst in found if (f, dst) not in UPWARD_ALLOWED]
    assert not unexpected, "\n".join(unexpected)
    stale = UPWARD_ALLOWED - {(f, dst) for f, _, _, dst in found}
    assert not stale, f"allow-listed edges that no longer exist (remove them): {sorted(stale)}"


def test_no_function_level_import_of_an_ember_module():
    found = function_level_imports()
    unexpected = [f"{f}:{line}: {fn}() imports {dst}" for f, line, fn, dst in found
                  if (f, fn, dst) not in FUNCTION_LEVEL_ALLOWED]
    assert not unexpected, "\n".join(unexpected)
    stale = FUNCTION_LEVEL_ALLOWED - {(f, fn, dst) for f, _, fn, dst in found}
    assert not stale, f"allow-listed imports that no longer exist (remove them): {sorted(stale)}"


def star_imports():
    return [f"{_relative(path)}:{node.lineno}: from {'.' * node.level}{node.module or ''} import *"
            for path, tree in _parsed() for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)]


def test_no_star_imports():
    found = star_imports()
    assert not found, "\n".join(found)


def _imported_modules(tree, path):
    """The names a file binds to modules: ``import x`` / ``import x as y``, and ``from pkg import
    sub`` where ``sub`` is an ember module."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _targets(node, path)
            names.update(alias.asname or alias.name for alias in node.names
                         if any(t.endswith("." + alias.name) for t in base))
    return names


def _local_names(function):
    """Names a function binds itself (arguments, assignments): they shadow the module names."""
    names = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    return names | {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _writes(node, modules):
    """What ``node`` writes into a module named in ``modules``: ``mod.name = / del mod.name``,
    ``setattr(mod, ...)``, ``mod.__dict__[...] =``, ``globals()[...] =``, ``globals().update(...)``."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
            and isinstance(node.value, ast.Name) and node.value.id in modules:
        return f"{node.value.id}.{node.attr}"
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
            and isinstance(node.value, ast.Subscript) \
            and "OPS" in (getattr(node.value.value, "id", None), getattr(node.value.value, "attr", None)):
        return f"OPS[...].{node.attr}"  # an op entry changed from outside its class
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
        if isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) in ("globals", "vars"):
            return f"{node.value.func.id}()[...]"
        if isinstance(node.value, ast.Attribute) and node.value.attr == "__dict__" \
                and getattr(node.value.value, "id", None) in modules:
            return f"{node.value.value.id}.__dict__[...]"
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("setattr", "delattr") \
            and node.args and getattr(node.args[0], "id", None) in modules:
        return f"{node.func.id}({node.args[0].id}, ...)"
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "update" \
            and isinstance(node.func.value, ast.Call) and getattr(node.func.value.func, "id", None) in ("globals", "vars"):
        return f"{node.func.value.func.id}().update"
    return None


def injected_globals():
    """(file, line, what) for every write into another module's namespace (or into its own
    through ``globals()``, which hides a name from grep)."""
    found = []
    for path, tree in _parsed():
        modules = _imported_modules(tree, path)
        if not any(_writes(node, modules) for node in ast.walk(tree)):
            continue  # (most files: the scoped walk below only rules out locals shadowing a module)
        scopes = [(tree, modules)]
        while scopes:
            scope, names = scopes.pop()
            stack = list(ast.iter_child_nodes(scope))
            while stack:
                node = stack.pop()
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    scopes.append((node, names - _local_names(node)))
                    continue
                what = _writes(node, names)
                if what:
                    found.append((_relative(path), node.lineno, what))
                stack.extend(ast.iter_child_nodes(node))
    return sorted(found)


def test_no_module_writes_into_another():
    found = injected_globals()
    unexpected = [f"{f}:{line}: writes {what}" for f, line, what in found if (f, what) not in INJECTION_ALLOWED]
    assert not unexpected, "\n".join(unexpected)
    stale = INJECTION_ALLOWED - {(f, what) for f, _, what in found}
    assert not stale, f"allow-listed writes that no longer exist (remove them): {sorted(stale)}"


def test_the_checks_can_fail(monkeypatch):
    """Each check above finds what it forbids, in a scratch file placed in ``ember._ops``: an
    upward import, a function-level import, a star import and writes into other modules (and
    not a local that shadows a module's name)."""
    source = ("import ember\nfrom ember._ops import core\nfrom . import shape\nfrom .core import *\n"
              "core.Tensor = object\nsetattr(core, 'x', 1)\nglobals()['y'] = 2\ncore.OPS['Add'].forward = None\n"
              "def f(shape):\n    from ember import nn\n    shape.x = 1\n    core.y = 2\n")
    fake = [(PACKAGE / "_ops" / "scratch_layers_check.py", ast.parse(source))]
    monkeypatch.setattr(sys.modules[__name__], "_parsed", lambda: fake)
    assert [dst for _, _, _, dst in upward_edges()] == ["ember"]
    assert [dst for _, _, _, dst in function_level_imports()] == ["ember.nn"]
    assert [what for _, _, what in injected_globals()] == [
        "core.Tensor", "setattr(core, ...)", "globals()[...]", "OPS[...].forward", "core.y"]
    assert len(star_imports()) == 1


# DESIGN.md: a file is short enough to read in one sitting (~600 lines at most), except where one
# PyTorch module is that long by nature.
MAX_LINES = 600
LONG_ALLOWED = {"ember/optim/lr_scheduler.py"}  # torch.optim.lr_scheduler: its sixteen classes, one module


def test_no_source_file_is_longer_than_a_sitting():
    long = {_relative(path): n for path in _files() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert set(long) - LONG_ALLOWED == set(), f"over {MAX_LINES} lines (split what a reader would): {long}"
    assert LONG_ALLOWED <= set(long), f"no longer long (remove from LONG_ALLOWED): {LONG_ALLOWED - set(long)}"
