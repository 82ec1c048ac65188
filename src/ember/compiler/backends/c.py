"""The C backend: plan, generate, build (through the cache), autotune, and a Python driver.

The driver is generated Python (written by the reference backend's :class:`Program`): it
points the table's slots at the placeholders' arrays (only when a different array comes in),
runs each run of C kernels with one ctypes call, runs the nodes C does not know through their
``forward``, and copies outputs and the mutations C did not write in place.

A graph with size symbols compiles once for every size: the driver is ``fn(arrays, sizes)``;
when the sizes differ from the last call's it sizes the buffers that depend on them (growing
their memory only when a larger size comes) and passes the sizes to each C entry point.
"""
import ctypes
import functools
import sys
import threading
import time

import numpy as np

from ... import _backend
from ..graph import kwarg_nodes
from ..symbolic import Expr, evaluator
from . import autotune, cache, gather, indexing, toolchain
from .cgen import generate
from .plan import make_plan
from .python import Program, label, value_names, with_ranges
from ..._logging import log_enabled

__all__ = ["compile_c", "cached_c", "blas_pointers", "log_enabled"]


def _blas_libraries():
    """threadpoolctl's controllers of the loaded BLAS libraries (none without threadpoolctl),
    as ember's backend listed them at import (listing inspects every loaded library: 1.7 ms
    of a warm start when it was listed again here)."""
    return _backend.BLAS_LIBRARIES


def _thread_functions(lib):
    """Addresses of openblas_set_num_threads and openblas_get_num_threads of the OpenBLAS
    threadpoolctl's controller ``lib`` drives."""
    return tuple(ctypes.cast(lib._get_symbol(f"openblas_{f}_num_threads"), ctypes.c_void_p).value
                 for f in ("set", "get"))


@functools.lru_cache(maxsize=None)
def _openblas():
    """(addresses of the set- and get-thread-count functions, threadpoolctl's controller) of
    the OpenBLAS SciPy ships, or None (another BLAS, or no threadpoolctl)."""
    try:
        for lib in _blas_libraries():
            if lib.internal_api == "openblas" and "scipy" in lib.filepath and "numpy" not in lib.filepath:
                return _thread_functions(lib), lib
    except Exception:  # a BLAS threadpoolctl cannot drive: leave its threads alone
        pass
    return None


def _blas_threads():
    """(addresses of the set- and get-thread-count functions, the thread count now) of SciPy's
    OpenBLAS, or (None, None, 1)."""
    found = _openblas()
    return (None, None, 1) if found is None else (*found[0], found[1].get_num_threads())


def blas_pointers():
    """Addresses of sgemm and dgemm from SciPy's ``cython_blas`` (the BLAS SciPy ships), or None."""
    try:
        from scipy.linalg import cython_blas
    except ImportError:
        return None
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    capi = cython_blas.__pyx_capi__
    return tuple(get(capi[f], name(capi[f])) for f in ("sgemm", "dgemm"))


@functools.lru_cache(maxsize=None)
def numpy_blas_pointers():
    """Addresses of sgemm, dgemm (64-bit integers) and the set- and get-thread-count functions
    of the OpenBLAS NumPy ships, or None (looked up once per process)."""
    try:
        for lib in _blas_libraries():
            if lib.internal_api == "openblas" and "numpy" in lib.filepath:
                dll = ctypes.CDLL(lib.filepath)
                for prefix, suffix in (("scipy_", "_64_"), ("", "_64_"), ("", "64_")):
                    if hasattr(dll, f"{prefix}sgemm{suffix}"):
                        gemms = [getattr(dll, f"{prefix}{f}{suffix}") for f in ("sgemm", "dgemm")]
                        return (*(ctypes.cast(f, ctypes.c_void_p).value for f in gemms), *_thread_functions(lib))
    except Exception:  # a NumPy without OpenBLAS, or no threadpoolctl: SciPy's BLAS serves
        pass
    return None


def _lookup(graph, options, compiler):
    """(BLAS pointers, autotuning, cache key, the cache's record, library, C source) of
    compiling ``graph``; the last three None where the cache does not hold it."""
    pointers = blas_pointers()
    autotuning = bool(options.get("max_autotune"))
    key = cache.graph_key(graph, compiler, pointers is not None, autotuning)
    hit = cache.load(key, graph) if key else None
    lib = toolchain.load(hit[0]) if hit else None
    source = _cached_source(hit[0]) if lib else None
    return pointers, autotuning, key, hit, lib, source


def cached_c(graph, options, compiler):
    """``graph``'s C callable when the disk cache holds its library (no C compiler runs), else None."""
    found = _lookup(graph, options, compiler)
    return compile_c(graph, options, compiler, found=found) if found[-1] is not None else None


def compile_c(graph, options, compiler, *, parallel=True, found=None, apart=None):
    """The C callable for ``graph``; raises toolchain.CompileError when the compiler fails.
    ``parallel``: the C compiler runs on several units at once (:func:`toolchain.jobs`), or on
    one unit (a background build, beside the program's own work); ``found``: the cache lookup
    made already (:func:`cached_c`); ``apart``: the build runs in a process of its own, which
    finishes it even if this one exits (:func:`toolchain.build`)."""
    start = time.perf_counter()
    pointers, autotuning, key, hit, lib, source = found or _lookup(graph, options, compiler)
    warm = source is not None
    if warm:  # no planning, no C generated, no compiler
        _, plan, regions, gemms, slots, convs = hit
        plan.have_blas = pointers is not None  # part of the key: the variants built were chosen with it
        cached = True
    else:
        plan = make_plan(graph, have_blas=pointers is not None)
        # max_autotune generates both variants of a conv kernel without a record, to time them
        recorded = functools.partial(autotune.recorded_conv, compiler=compiler, have_blas=plan.have_blas)
        program, regions, gemms, slots, convs = generate(
            plan, lambda kernel: None if autotuning and recorded(kernel)[1] != "cached" else recorded(kernel)[0],
            lambda shape, kernel: None if autotuning else autotune.planned(shape, kernel)[0])
        source = str(program)
        # two units per CPU: their compile times differ more than their lengths (measured:
        # LeNet's step 1.7 s of gcc in one unit, 1.0 s wall on 2 CPUs in 4, 1.1 s in 8)
        openmp = "#pragma omp parallel" in source
        units = program.units(2 * toolchain.jobs() if parallel else 1,
                              lambda unit: toolchain.has_object(unit, compiler, openmp=openmp))

        def then(lib_key):  # written once the library is: its source (fn.c_source when warm), the graph's record
            return [(toolchain.cache_dir() / f"{lib_key}.c", source)] + \
                ([cache.record(key, lib_key, plan, regions, gemms, slots, convs)] if key else [])
        lib, cached, _ = toolchain.build(units, compiler, openmp=openmp, parallel=parallel, apart=apart, then=then)
    if log_enabled("output_code"):
        print(f"// ember.compile: generated C for graph of {len(graph.nodes)} nodes\n{source}", file=sys.stderr)
    if pointers is not None:
        set_threads, get_threads, threads = _blas_threads()
        lib.em_init(*map(ctypes.c_void_p, (*pointers, set_threads, get_threads)), ctypes.c_int(threads))
        wide = numpy_blas_pointers()
        if wide is not None:
            lib.em_init64(*map(ctypes.c_void_p, wide))
    table = (ctypes.c_void_p * max(1, len(slots)))()
    buffers = {}  # slot -> the memory its values share (memory planning)
    for index, storage in slots.items():
        if storage.kind == "buffer" and not storage.sized:
            buffers[index] = np.empty(storage.nbytes, np.uint8)
            table[index] = buffers[index].ctypes.data
    table.buffers = buffers  # the table outlives the arrays it points at (a kernel's scratch has no other owner)
    _choose_gemms(lib, gemms, slots, options, compiler)
    _choose_convs(lib, convs, plan.have_blas, slots, options, compiler)
    fn = _driver(plan, lib, regions, slots, buffers, table)
    fn.c_source, fn.cached = source, cached
    fn.graph_cache = "hit" if warm else "miss" if key else "bypass"
    fn.compile_seconds = time.perf_counter() - start
    return fn


def _cached_source(lib_key):
    """The C source the cached library was built from (``fn.c_source``), None if unreadable."""
    try:
        return (toolchain.cache_dir() / f"{lib_key}.c").read_text()
    except OSError:
        return None


def _choose_gemms(lib, gemms, slots, options, compiler):
    choices = (ctypes.c_int * max(1, len(gemms))).in_dll(lib, "em_choice")
    blocks = (ctypes.c_long * max(1, len(gemms))).in_dll(lib, "em_block")
    scratch = None
    for i, (fname, shape, kernel) in enumerate(gemms):
        fn = getattr(lib, fname)
        fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_int, ctypes.c_long], None
        if any(isinstance(v, Expr) for v in shape):  # no sizes to time
            choices[i], blocks[i] = autotune.planned(shape, kernel)
            continue
        if options.get("max_autotune") and scratch is None:
            scratch = _scratch_table(slots)
        choice, block, how = autotune.choose(fname, shape, kernel, fn, scratch, compiler)
        choices[i], blocks[i] = choice, block
        if log_enabled("autotuning"):
            m, n, k, size = shape
            print(f"[ember autotuning] {kernel.nodes[0].name} [{m}x{k}]@[{k}x{n}] "
                  f"{'+ epilogue ' if kernel.epilogue else ''}-> {autotune.NAMES[choice]}"
                  f"{f' (block {block} rows)' if choice == 1 else ''} ({how})", file=sys.stderr)


def _choose_convs(lib, convs, have_blas, slots, options, compiler):
    """Each convolution's variant: autotune.choose_conv."""
    choices = (ctypes.c_int * max(1, len(convs))).in_dll(lib, "em_conv_choice")
    scratch = _scratch_table(slots) if options.get("max_autotune") and convs else None
    for i, (fname, kernel) in enumerate(convs):
        fn = getattr(lib, fname)
        fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_int], None
        choice, how = autotune.choose_conv(kernel, fn, scratch, compiler, have_blas)
        choices[i] = choice
        if log_enabled("autotuning"):
            node = kernel.nodes[0]
            print(f"[ember autotuning] {node.name} {node.target.name} "
                  f"{list(node.args[0].meta['shape'])} -> {list(node.meta['shape'])} "
                  f"-> {autotune.CONV_NAMES[choice]} ({how})", file=sys.stderr)


def _scratch_table(slots):
    """A pointer table over fresh arrays of every slot's size: autotuning runs kernels on it,
    never on the user's arrays (an epilogue may update parameters in place). None in a graph
    with a buffer sized per call (size symbols): nothing to time on, the cost model chooses."""
    if any(storage.sized for storage in slots.values()):
        return None
    table = (ctypes.c_void_p * max(1, len(slots)))()
    keep = []
    rng = np.random.default_rng(0)
    for index, storage in slots.items():
        a = np.empty(storage.shape, storage.dtype)
        if a.dtype.kind == "f":
            a[...] = rng.standard_normal(a.shape)
        else:
            a[...] = 0
        keep.append(a)
        table[index] = a.ctypes.data
    table._keep = keep
    return table


def _fresh(table, last):
    """``fresh(array, i, slot, shape, dtype, name)``: a placeholder's array that is not the
    last call's: checked to be what the code was generated for, made C-contiguous, its address
    put into ``table[slot]``. ``last[i]`` keeps it when no copy was needed, so the next call
    passing the same array skips all of this (a copy is made afresh: its source may change)."""
    def fresh(array, i, slot, shape, dtype, name):
        if array.shape != shape or array.dtype != dtype:
            raise ValueError(f"compiled graph input {name!r} must be {dtype}{list(shape)}, got "
                             f"{array.dtype}{list(array.shape)}")
        last[i] = None
        if array.flags.c_contiguous:
            last[i] = array
        else:
            array = np.ascontiguousarray(array)
        table[slot] = array.ctypes.data
        return array
    return fresh


def _sized_buffers(graph, table, sized, views):
    """``setup(sizes)`` for a graph with size symbols: gives each buffer of ``sized`` ({slot:
    byte count expression}) memory for ``sizes`` (kept while large enough), makes the arrays
    the driver reads (``views``: (name, slot, shape, dtype)) and the sizes C takes (``SZ``).
    Returns (setup, V: the dict the driver reads them from, SZ)."""
    memory, values = {}, {"sizes": None}
    sz = (ctypes.c_int64 * len(graph.symbols))()
    sized = [(slot, evaluator(nbytes)) for slot, nbytes in sized.items()]
    views = [(name, slot, evaluator(tuple(shape)), dtype) for name, slot, shape, dtype in views]

    def setup(sizes):
        for slot, nbytes in sized:
            n = max(1, nbytes(sizes))
            if slot not in memory or memory[slot].nbytes < n:
                memory[slot] = np.empty(n, np.uint8)
                table[slot] = memory[slot].ctypes.data
        for name, slot, shape, dtype in views:
            values[name] = np.ndarray(shape(sizes), dtype, buffer=memory[slot])
        sz[:] = [sizes[n] for n in graph.symbols]
        values["sizes"] = dict(sizes)
    return setup, values, sz


class _Handout:
    """Outputs handed out without a copy. Each output computed into a buffer of the memory
    plan (its "host", shared with the values that died before it was born) is returned as the
    array over that memory; the next call must not overwrite it while the caller holds it (a
    saved activation waiting for the backward, a gradient in ``.grad``). So each host keeps a
    small pool of memories, each with the arrays the driver reads over it, and every call runs
    on one that nobody else references (by reference counts: the output array, and the memory
    every NumPy view of it is based on), allocating another only when all are held.

    ``hosts``: {slot: (byte count, output's name, [(name, shape, dtype, strides)] of the
    arrays the driver reads over that memory)}; ``spaces``: the namespaces of the driver's
    functions, whose globals hold those arrays."""

    POOL = 3  # memories kept per host; beyond, a held one is left to its holders

    def __init__(self, table, hosts, buffers, spaces):
        self.table, self.hosts, self.spaces = table, hosts, spaces
        self.pools = {h: [] for h in hosts}
        self.active = {}
        for h, (nbytes, _, _) in hosts.items():  # replaces the planned buffer and the arrays over it
            self._activate(h, self._entry(h))
        buffers.update(self.pools)  # the table's owners (table.buffers)

    def _entry(self, h):
        nbytes, out, views = self.hosts[h]
        memory = np.empty(nbytes, np.uint8)
        arrays = {name: np.ndarray(shape, dtype, buffer=memory, strides=strides)
                  for name, shape, dtype, strides in views}
        entry = [memory, arrays, arrays[out], 0, 0]
        del memory, arrays
        # the reference counts of the memory (the entry, each array's base) and of the output
        # (the entry, the dict) while only the pool holds them, measured as _held measures
        # them: not constants, as what sys.getrefcount counts differs between Python versions
        entry[3:] = self._counts(entry)
        self.pools[h].append(entry)
        return entry

    @staticmethod
    def _counts(entry):
        return sys.getrefcount(entry[0]), sys.getrefcount(entry[2])

    @classmethod
    def _held(cls, entry, active):
        """Whether anything but the pool (and the driver's globals, when ``active``)
        references the entry's output or memory."""
        memory, output = cls._counts(entry)
        return memory > entry[3] or output - active > entry[4]

    def _activate(self, h, entry):
        self.active[h] = entry
        self.table[h] = entry[0].ctypes.data
        for space in self.spaces:
            space.update(entry[1])

    def add_space(self, space):
        """Another namespace holding the driver's arrays (the profiled driver's)."""
        self.spaces.append(space)
        for entry in self.active.values():
            space.update(entry[1])

    def __call__(self):
        """Before each call: every host on memory nobody holds."""
        for h, entry in self.active.items():
            if not self._held(entry, len(self.spaces)):
                continue
            pool = self.pools[h]
            free = next((e for e in pool if e is not entry and not self._held(e, 0)), None)
            if free is None:
                if len(pool) >= self.POOL:  # its holders keep it alive; the pool forgets it
                    pool[:] = [e for e in pool if e is not entry]
                free = self._entry(h)
            self._activate(h, free)


def _driver(plan, lib, regions, slots, buffers, table):
    graph, program = plan.graph, Program(plan.graph.symbols)
    names = value_names(graph)
    last = [None] * len(graph.placeholders)
    program.globals.update(P=table, L=last, fresh=_fresh(table, last), lib=lib,
                           FAIL=_failure(plan, ctypes.c_int64.in_dll(lib, "em_bad_target"),
                                         ctypes.c_int64.in_dll(lib, "em_bad_where")))
    slot_of = {s.node: i for i, s in slots.items()}
    body, known = [], {}
    sized = {i: s.nbytes for i, s in slots.items() if s.kind == "buffer" and s.sized}
    views = []  # the arrays over sized buffers the driver reads, made per size
    tenants = {}  # slot -> (name, shape, dtype, strides) of the arrays over its memory
    for i, p in enumerate(graph.placeholders):
        params = names[p]
        if p in slot_of:
            loc = plan.loc[p]
            # C addresses the array with the shape and dtype it was compiled for: a new array
            # is checked once, before its address goes into the table.
            body.append(f"a{i} = {params} if {params} is L[{i}] else fresh({params}, {i}, {slot_of[p]}, "
                        f"{program.constant(loc.shape)}, {str(loc.dtype)!r}, {p.name!r})")
            known[p] = f"a{i}"
        else:
            known[p] = params
    for node, loc in plan.loc.items():  # each value kept in a buffer, as an array over its memory
        index = loc.storage.resolve().index
        if loc.storage.node is node and index in buffers:
            # a sum of index gradients may be laid out permuted (plan._permuted_loc)
            strides = [s * loc.dtype.itemsize for s in loc.strides] if node in plan.scatter_sums else None
            program.globals[f"B_{names[node]}"] = np.ndarray(loc.shape, loc.dtype, buffer=buffers[index], strides=strides)
            known[node] = f"B_{names[node]}"
            tenants.setdefault(index, []).append((known[node], loc.shape, loc.dtype, strides))
        elif loc.storage.node is node and index in sized:
            views.append((f"B_{names[node]}", index, loc.shape, loc.dtype))
            known[node] = f"B_{names[node]}"
    c_args = "P"
    if graph.symbols:
        setup, values, sz = _sized_buffers(graph, table, sized, views)
        program.globals.update(SETUP=setup, V=values, SZ=sz)
        body[:0] = ["if sizes != V['sizes']: SETUP(sizes)"] + [f"{v} = V[{v!r}]" for v, *_ in views]
        c_args = "P, SZ"
    for value, placeholder in plan.in_place.items():
        known[value] = known[placeholder]
    handed = _handed_out(plan, buffers)
    hosts = {h: (buffers[h].nbytes, known[o], tenants[h]) for h, o in handed.items()}
    handout = _Handout(table, hosts, buffers, [program.globals])
    program.globals["H"] = handout
    if hosts:
        body.append("H()")

    def name_of(node):
        if node not in known:  # a view C addressed through strides, wanted in Python
            lines.append(program.call_line(node, {**names, **{a: name_of(a) for a in _inputs(node)}}))
            known[node] = names[node]
        return known[node]

    lines, profiled, prefix = body, [], len(body)
    region_of = {id(r[0]): i for i, r in enumerate(regions)}
    argtypes = [ctypes.c_void_p] + [ctypes.POINTER(ctypes.c_int64)] * bool(graph.symbols)
    for index, kernel in enumerate(plan.kernels):
        start = len(lines)
        if kernel.kind == "python":
            node = kernel.nodes[0]
            args = {a: name_of(a) for a in _inputs(node)}
            lines.append(program.call_line(node, {**names, **args}))
            known[node] = names[node]
            if node in slot_of:
                v = names[node]
                # np.asarray: kernels may return NumPy scalars; a copy only when not C-ordered
                # (ascontiguousarray would make a 0-d result 1-d for the Python code after it)
                lines += [f"{v} = np.asarray({v})", f"if not {v}.flags.c_contiguous: {v} = {v}.copy()",
                          f"P[{slot_of[node]}] = {v}.ctypes.data"]
            profiled += [f"with RF({'ember::' + label(node).split('(')[0]!r}):"] + ["    " + ln for ln in lines[start:]]
            continue
        if id(kernel) in region_of:
            r = region_of[id(kernel)]
            fn = getattr(lib, f"region_{r}")
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
            program.globals[f"R{r}"] = fn
            lines.append(f"if (failed := R{r}({c_args})): FAIL(failed{', sizes' * bool(graph.symbols)})")
        fn = getattr(lib, f"kernel_{index}")
        fn.argtypes, fn.restype = argtypes, ctypes.c_int
        program.globals[f"K{index}"] = fn
        profiled += [f"with RF({_range_name(index, kernel)!r}):",
                     f"    if (failed := K{index}({c_args})): FAIL(failed{', sizes' * bool(graph.symbols)})"]
    tail = len(lines)
    outs = []
    for o in graph.outputs:
        if not hasattr(o, "meta"):
            outs.append(program.constant(o))
        elif o.op == "placeholder":
            outs.append(names[o])
        elif o in handed.values():
            outs.append(known[o])
        elif plan.kind.get(o) is not None or getattr(o.target, "is_view", False):  # C's memory
            outs.append(f"np.array({name_of(o)})")
        else:
            outs.append(f"np.asarray({name_of(o)})")
    for placeholder, value in graph.mutations:
        p = names[placeholder]
        if plan.in_place.get(value) is placeholder:
            lines.append(f"if {known[placeholder]} is not {p}: np.copyto({p}, {known[placeholder]})")
        else:
            lines.append(f"np.copyto({p}, {name_of(value)}, casting='unsafe')")
    lines.append(f"return [{', '.join(outs)}]")
    params = [names[p] for p in graph.placeholders]
    plain, source = program.function(params, lines)
    handout.add_space(plain.__globals__)
    choose = with_ranges(program, params, plain, lines[:prefix] + profiled + lines[tail:],
                         lambda fn: handout.add_space(fn.__globals__))
    lock = threading.Lock()  # one call at a time: the buffers and the pointer table are the callable's

    def run(*arrays_and_sizes):  # (arrays) or, with size symbols, (arrays, sizes)
        with lock:
            return choose(*arrays_and_sizes)
    run.source = source
    if log_enabled("output_code"):
        print(f"# ember.compile: driver\n{source}", file=sys.stderr)
    return run


def _failure(plan, bad, where):
    """``FAIL(code)``: raises what eager raises for the entry ``bad`` a C kernel refused (kernel
    ``code - 1``: a cross-entropy target, a gather/scatter index, an index or embedding id
    out of range, ``where`` its dim or position; ``sizes``: the call's, in a graph with symbols)."""
    def fail(code, sizes=None):
        kernel = plan.kernels[code - 1]
        if kernel.kind in ("gather", "sort", "conv") and where.value == -1:
            raise MemoryError(f"{kernel.nodes[0].name}: no memory for the kernel's buffers")
        if kernel.kind == "gather":
            raise RuntimeError(gather.error_message(kernel.nodes[0], bad.value))
        if kernel.kind == "index":
            raise indexing.error(kernel.nodes[0], bad.value, where.value, sizes)
        raise IndexError(f"Target {bad.value} is out of bounds.")
    return fail


def _inputs(node):
    """The nodes a node run from Python reads: its args' and its attrs' (index arrays)."""
    return [a for a in node.args if hasattr(a, "meta")] + kwarg_nodes(node)


def _handed_out(plan, buffers):
    """{slot: output node} of the outputs returned without a copy (:class:`_Handout`): the
    C-ordered values that own a planned buffer from its start. Outputs in a placeholder's
    memory, views and permuted gradient sums are copied (``np.array``)."""
    handed = {}
    for o in plan.graph.outputs:
        loc = plan.loc.get(o) if hasattr(o, "meta") and o.op != "placeholder" else None
        if loc is None or plan.kind.get(o) in (None, "view") or o in plan.scatter_sums:
            continue
        index = loc.storage.resolve().index
        if loc.storage.node is o and index in buffers and loc.offset == 0 and loc.contiguous:
            handed[index] = o
    return handed


def _range_name(index, kernel):
    """The profiler's name of a C kernel: its number, kind and the ops it computes."""
    nodes = kernel.nodes + kernel.sums + (kernel.epilogue.nodes if kernel.epilogue else [])
    return f"compiled::k{index} {kernel.kind}: " + ", ".join(label(n) for n in nodes)
