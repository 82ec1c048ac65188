"""Finding a C compiler and building shared libraries through an on-disk cache.

The compiler is found as users have it: ``$CC``, then ``cc``/``gcc``/``clang`` on ``PATH``,
then the ``ziglang`` wheel (``python -m ziglang cc``, the ``compile`` extra). Libraries are
cached under ``$XDG_CACHE_HOME/ember/compile`` (``~/.cache/ember/compile`` by default), in a
directory only the user can write. A library's translation units compile in parallel, each
into an object named by the SHA-256 of its source, the runtime headers, compiler, flags and
CPU (``o-<hash>.o``), and the library is named by its objects. Each object and library sits
beside a record of its own SHA-256 and is used only when they match, so a corrupt or tampered
entry is rebuilt; every file is written to a temporary name and moved in
place with ``os.replace``, so a process killed mid-build leaves no half-written entry.
"""
import concurrent.futures
import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["loop_nest", "row_loops", "CompileError", "find_compiler", "cache_dir", "build", "load", "jobs", "write_atomic", "code_digest",
           "runtime_headers", "FLAGS", "unit_flags", "simd_reduction", "compile_cost", "has_object",
           "Left", "leave"]

# IEEE semantics, as eager's NumPy kernels: no -ffast-math, whose algebra assumes no operand
# is nan, inf or -0.0 (so that `a - (a - b)` became `b` for a = nan, `sqrt(x)**2` became `x`)
# and which reassociates any float sum. Kept: -O3 and the FMA contraction GCC and Clang do by
# default (one rounding fewer, as torch's vectorised kernels; the fused elementwise loops turn
# it off, EM_NO_CONTRACT in runtime/ember_graph.h), and the two flags that change
# no result: math functions need not set errno, and floating point never traps. Reductions
# are vectorised by an explicit `#pragma omp simd reduction` (:func:`simd_reduction`), which
# -fopenmp-simd enables without linking an OpenMP runtime.
FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-fPIC")
# Linked in a second step without the compile flags (a -ffast-math link, should $CC add one,
# would pull in GCC's crtfastmath.o, whose loading switches the whole process, NumPy
# included, to flushing subnormals to zero).
LINK_FLAGS = ("-shared",)
RUNTIME = Path(__file__).resolve().parent.parent / "runtime"
_loaded = {}


class CompileError(RuntimeError):
    """The C compiler failed; ``log`` is the path of the file holding its command and output."""

    def __init__(self, message, log):
        super().__init__(message)
        self.log = log


def find_compiler():
    """The compiler command as an argument list, or None when there is none."""
    cc = os.environ.get("CC")
    if cc:
        argv = shlex.split(cc)
        if argv and shutil.which(argv[0]):
            return argv
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return [path]
    if importlib.util.find_spec("ziglang") is not None:
        return [sys.executable, "-m", "ziglang", "cc"]
    return None


@functools.lru_cache(maxsize=None)
def compiler_identity(argv):
    """The compiler's ``--version`` banner (part of every cache key)."""
    try:
        out = subprocess.run(list(argv) + ["--version"], capture_output=True, text=True, timeout=60)
        return out.stdout.strip() or " ".join(argv)
    except (OSError, subprocess.SubprocessError):
        return " ".join(argv)


@functools.lru_cache(maxsize=None)
def cpu_identity():
    """Machine, CPU model and feature flags: -march=native code is only valid on the same CPU.
    Read from ``/proc/cpuinfo`` where it names them: ``platform.processor()`` runs ``uname -p``,
    a process started by every warm start (10-20 ms of wall time on a busy machine)."""
    found = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "flags", "Features"):
                    found.setdefault("model" if key == "model name" else "flags", value.strip())
                if "flags" in found:
                    break
    except OSError:
        pass
    model = found.get("model") or platform.processor()
    return f"{platform.machine()} {model} {found.get('flags', '')}"


def cache_dir():
    """The private cache directory (created 0700); ValueError if another user could write it."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(base) / "ember" / "compile"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = path.stat()
    if st.st_uid != os.getuid():
        raise ValueError(f"{path} belongs to another user")
    if st.st_mode & 0o022:
        os.chmod(path, 0o700)
    return path


def _openmp_flags(argv):
    # GCC ships libgomp; Clang and zig need a libomp that is often missing.
    return ["-fopenmp"] if "Free Software Foundation" in compiler_identity(tuple(argv)) else []


def _simd_flags(argv):
    # `omp simd` pragmas without the OpenMP runtime: GCC (>= 4.9) and Clang (>= 3.8, zig's too).
    identity = compiler_identity(tuple(argv))
    return ["-fopenmp-simd"] if "Free Software Foundation" in identity or "clang" in identity else []


def _vector_flags(argv):
    # GCC and Clang tune -march=native for 256-bit vectors even where AVX-512 is present (GCC 12
    # on an Intel Xeon with AVX-512: -mprefer-vector-width=256), so loops used half the registers'
    # width. Measured there (one thread, 512K float32): GELU's loop 0.51 -> 0.42 ms, its
    # gradient's 0.44 -> 0.35 ms; on AMD Zen 4 a 512-bit operation costs two 256-bit ones.
    identity = compiler_identity(tuple(argv))
    wide = " avx512f " in f" {cpu_identity()} " and ("Free Software Foundation" in identity or "clang" in identity)
    return ["-mprefer-vector-width=512"] if wide else []


def simd_reduction(op, *names):
    """The pragma that vectorises the next loop, in which the C variables ``names`` accumulate
    with ``op`` (``+``, ``max``, ``|``): each vector lane keeps a partial result and the lanes
    are combined after the loop. That reassociates a sum (it rounds as torch's vectorised
    sums do, not as a left-to-right one: error ~ n ulp either way) but changes no nan, inf or
    signed zero; IEEE flags forbid the compiler to do it by itself. A compiler without
    ``-fopenmp-simd`` ignores the pragma and runs the loop in order."""
    return f"#pragma omp simd reduction({op}:{', '.join(names)})"


def loop_nest(loop_vars, sizes, statement):
    """C lines of one loop per variable of ``loop_vars`` (``for (long i0 = 0; i0 < n0; i0++)``,
    nested, the first outermost) over ``sizes`` (numbers or size symbols' C expressions), around
    the one-line ``statement``."""
    lines = [f"{'    ' * (d + 1)}for (long {v} = 0; {v} < {n}; {v}++)"
             for d, (v, n) in enumerate(zip(loop_vars, sizes))]
    return lines + [f"{'    ' * (len(lines) + 1)}{statement}"]


def row_loops(dims, loop_vars, body, parallel, hoist=False):
    """C lines of the loops of a fused elementwise kernel (cgen._loop_kernel), the outer over
    rows r0..r1, around ``body``; ``parallel``: OpenMP threads over the outer loop (a string:
    the pragma's clause). The innermost loop is marked free of loop-carried dependences: GCC's
    ``ivdep``, or, where it is the parallel one too (one dimension), ``omp parallel for simd``
    (nothing may stand between ``omp parallel for`` and its loop). ``hoist`` (where no operand
    shares memory with a store and the innermost loop runs): the values that loop does not
    change are computed just before it (:func:`row_invariant`; two dimensions or more)."""
    hoisted, body = row_invariant(body, loop_vars[-1]) if hoist and len(dims) > 1 else ((), body)
    simd = " simd" if len(dims) == 1 else ""
    lines = [f"    #pragma omp parallel for{simd}{'' if parallel is True else ' ' + parallel}"] if parallel else []
    indent = "    "
    for d, (v, n) in enumerate(zip(loop_vars, dims)):
        lo, hi = ("r0", "r1") if d == 0 else ("0", str(n))
        if d == len(dims) - 1 and d > 0:
            lines += [indent + ln for ln in hoisted]
        if d == len(dims) - 1 and not (d == 0 and parallel):
            lines.append(indent + "#pragma GCC ivdep")
        lines.append(f"{indent}for (long {v} = {lo}; {v} < {hi}; {v}++) {{")
        indent += "    "
    lines += [indent + ln for ln in body]
    return lines + ["    " * (len(dims) - d) + "}" for d in range(len(dims))]


_DEFINITION = re.compile(r"^[A-Za-z_][\w ]* (t\d+) = (.*);$")


def row_invariant(body, var):
    """(the lines of a loop body, ``T tK = expr;`` values then stores, that do not change along
    the loop over ``var``: loads ``var`` does not index and the values of these alone; the
    rest). GCC hoists neither such loads past the loop's stores, which may alias them, nor the
    math on them: a layer norm's ``1 / sqrtf(var + eps)`` was computed for each vector of its
    row (a square root and a division: 36 -> 11 us per [1024, 128] on Zen 4, the same bits)."""
    hoisted, rest, varying = [], [], set()
    for line in body:
        match = _DEFINITION.match(line)
        names = set(re.findall(r"\w+", match.group(2))) if match else set()
        if match and var not in names and not names & varying and all(map(_DEFINITION.match, rest)):
            hoisted.append(line)
        else:
            rest.append(line)
            varying.update(match.groups()[:1] if match else ())
    return hoisted, rest


@functools.lru_cache(maxsize=None)
def runtime_headers():
    """The headers the generated code includes: part of its content, so part of the key."""
    return "".join(p.read_text() for p in sorted(RUNTIME.glob("*.h")))


def _hash_code(code, h):
    """Feeds a code object's bytecode, names and constants (nested code's too) to the hash
    ``h`` (marshal's output changes with reference counts; a frozenset's order with the seed)."""
    h.update(code.co_code + repr(code.co_names).encode())
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            _hash_code(const, h)
        else:
            h.update((repr(sorted(map(repr, const))) if isinstance(const, frozenset) else repr(const)).encode())


_code_digests = {}  # the code objects hashed -> their digest (a warm start hashes nothing twice)


def code_digest(modules):
    """SHA-256 (hex) of the code of every function and method defined in ``modules`` as loaded:
    the course's import hook gives them a student's bodies, a test may patch one, with no file
    of the package changed."""
    codes = []
    for module in modules:
        name = module.__name__
        for attr, value in sorted(vars(module).items()):
            if getattr(value, "__module__", None) != name:  # imported: hashed where it is defined
                continue
            for key, member in vars(value).items() if isinstance(value, type) else [(attr, value)]:
                code = getattr(member, "__code__", None)
                if code is not None:
                    codes.append((f"{name}.{key}", code))
    codes = tuple(codes)  # code objects compare by their contents, constants' types included
    if codes not in _code_digests:
        h = hashlib.sha256()
        for where, code in codes:
            h.update(where.encode())
            _hash_code(code, h)
        _code_digests[codes] = h.hexdigest()
    return _code_digests[codes]


def write_atomic(path, data):
    """Writes ``data`` (bytes) to ``path`` through a temporary file in the same directory and
    ``os.replace``: a reader sees the old file or the whole new one, never half of it (a
    process killed while compiling leaves no partial cache entry)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _hash(parts):
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _verified(path):
    """Whether ``path`` exists and matches the SHA-256 its record (``.json`` beside it) holds."""
    try:
        return json.loads(path.with_suffix(".json").read_text())["sha256"] == _digest(path)
    except (OSError, ValueError, KeyError, TypeError):
        return False  # missing, corrupt or tampered: to be built again


def _install(tmp, path, **record):
    """Moves the finished ``tmp`` to ``path``, then writes its record (so a file without a
    record, or with another's, is never trusted)."""
    os.replace(tmp, path)
    write_atomic(path.with_suffix(".json"), json.dumps({"sha256": _digest(path), **record}).encode())


def _open(path):
    """``ctypes.CDLL`` of a built library, OpenMP's idle threads told to sleep unless the user
    chose (``OMP_WAIT_POLICY``; libgomp reads it when the first library linking it loads). GCC's
    default spins, and a spinning team on a busy machine waits for threads that are not running:
    LeNet-5 inference (batch 360) on 2 cores beside two busy processes took 24-596 ms a call
    (median) spinning, 16 ms passive; idle, passive was no slower (15-17 ms against 23-34)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return ctypes.CDLL(str(path))


def load(key):
    """The cached library of ``key`` (a :func:`build` key), or None when it is missing, corrupt
    or does not match its recorded SHA-256."""
    if key not in _loaded:
        lib = cache_dir() / f"{key}.so"
        if not _verified(lib):
            return None
        _loaded[key] = _open(lib)
    return _loaded[key]


def jobs():
    """How many compilers run at once: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


_running = set()  # the compiler processes running now, for abandon()
_abandoned = []  # [True] once the process is exiting: no compiler starts after that
_lock = threading.Lock()


def _run(cmd, started=None, session=True, wait=True):
    """(failed, the command and its output) of running ``cmd``; ``started()`` is called once it
    runs. ``session``: in a session of its own (False in a build's own process, whose session
    holds its compilers); ``wait=False``: returns (False, "") once it runs."""
    try:
        with _lock:
            if _abandoned:
                return True, "the process is exiting: " + " ".join(cmd)
            # a session of its own: the compiler's children (gcc's cc1 and as) can be stopped with it
            process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True, start_new_session=session)
            _running.add(process)
        if started is not None:
            started()
        if not wait:
            return False, ""
        with process:
            try:
                text = process.communicate(timeout=300)[0]
            except subprocess.TimeoutExpired:
                _stop(process)
                text = process.communicate()[0] + "\nkilled after 300 s"
            except BaseException:  # Ctrl-C while it runs: the compiler stops too
                _stop(process)
                raise
            finally:
                with _lock:
                    _running.discard(process)
        failed = process.returncode != 0
    except (OSError, subprocess.SubprocessError) as e:
        failed, text = True, str(e)
    return failed, " ".join(cmd) + "\n" + text


def _stop(process):
    """Kills a compiler and the processes it started (which hold its output open)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (AttributeError, OSError):  # not POSIX, or gone already
        process.kill()


def abandon():
    """Stops every compiler process running and starts none after (a background build at
    exit: its ``build`` then fails and removes its temporary files; nothing is installed)."""
    with _lock:
        _abandoned.append(True)
        for process in _running:
            _stop(process)


def _sweep(root, age=3600):
    """Removes the temporary files a killed process left in the cache: this user's, older than
    ``age`` seconds (never one a running build is writing, nor another user's in a shared cache)."""
    now, uid = time.time(), getattr(os, "getuid", lambda: None)()
    for path in root.glob(".tmp-*"):
        try:
            st = path.stat()
            if now - st.st_mtime > age and uid in (None, st.st_uid):
                path.unlink()
        except OSError:
            pass


def unit_flags(unit):
    """Flags a unit's code asks for in ``/* cflags: ... */`` lines (generated C only), once each."""
    return list(dict.fromkeys(f for line in re.findall(r"^/\* cflags: (.*) \*/$", unit, re.M) for f in line.split()))


# ember_math.h's vector math, inlined at every call (a few dozen instructions each, vectorised)
_MATH_CALL = re.compile(r"\bem_(?:exp|expm1|log|log1p|tanh|tan|sinh|cosh|asinh|acosh|atanh|asin|acos|atan|sin|cos|erf|sigmoid)f?(?:_near)?\(")


def compile_cost(unit):
    """An estimate of the C compiler's time on ``unit`` (C text), in steps of about 4 ms of gcc
    -O3: one per thousand characters, one per loop, six per call of the inlined vector math.
    GCC's time follows the loops it vectorises and unrolls more than the text's length: over
    the 100 kernels of the GPT, LeNet and MLP steps, each compiled alone (gcc 12, AMD EPYC),
    the length alone predicted a kernel's time within 46 ms (rms; 235 ms at worst), this
    within 26 ms (100 ms at worst)."""
    return len(unit) / 1000 + unit.count("for (") + 6 * len(_MATH_CALL.findall(unit))


def _flags(argv, openmp):
    """(the OpenMP flags, every compile flag) of a unit built by ``argv`` (with OpenMP or not)."""
    omp = _openmp_flags(argv) if openmp else []
    return omp, list(FLAGS) + _simd_flags(argv) + _vector_flags(argv) + omp


def _object(unit, argv, openmp):
    """The cache path of the object that :func:`build` compiles ``unit`` (C source) into."""
    flags = _flags(argv, openmp)[1]
    same = [runtime_headers(), compiler_identity(tuple(argv)), " ".join(flags), cpu_identity()]
    return cache_dir() / f"o-{_hash([unit] + same)}.o"


def has_object(unit, argv, *, openmp=False):
    """Whether :func:`build` would find ``unit``'s object in the cache (verified) and compile
    nothing for it: a graph whose helper unit an earlier graph compiled gives every CPU kernels."""
    return _verified(_object(unit, argv, openmp))


def build(units, argv, *, openmp=False, parallel=True, apart=None, then=None):
    """Compiles ``units`` (C source, or a list of translation units' sources) into a shared
    library through the cache; returns ``(ctypes.CDLL, cached: bool, key)``. Each unit's
    object is cached under its own hash (a library that differs in one unit compiles that one
    only); the missing ones compile in parallel, :func:`jobs` at a time (one at a time without
    ``parallel``), the costliest first (:func:`compile_cost`), then link. ``then(key)``: the
    ``(path, text)`` files to write once the library is in the cache (the graph's record). ``apart``: the
    compilers, the link and the installs run in a Python process of their own (one unit at a
    time), which finishes the build in the cache even if this process exits meanwhile;
    ``apart()`` is called once it runs. Raises CompileError (with the log's path) on failure,
    and :class:`Left` where this process exits (:func:`leave`) before its build ends."""
    units = [units] if isinstance(units, str) else list(units)
    omp, flags = _flags(argv, openmp)
    objects = [_object(unit, argv, openmp) for unit in units]
    key = _hash([o.name for o in objects] + list(LINK_FLAGS) + omp)
    then = [[str(path), text] for path, text in then(key)] if then else []
    found = load(key)
    if found is not None:
        _write_then(then)
        return found, True, key
    root = cache_dir()
    _sweep(root)
    built, compiles = [], []  # (temporary, object) of each unit to compile; their commands
    # the costliest first: with the units cut to balance (cgen.CSource.units), each compiler
    # process that finishes takes the next largest, so the CPUs end together
    for unit, obj in sorted(zip(units, objects), key=lambda pair: -compile_cost(pair[0])):
        if not _verified(obj):
            c_file = obj.with_suffix(".c")
            write_atomic(c_file, unit.encode())
            built.append((_temp(root, ".o"), str(obj)))
            compiles.append(list(argv) + flags + unit_flags(unit) + ["-I", str(RUNTIME), "-c", str(c_file), "-o",
                                                                     built[-1][0]])
    lib = _temp(root, ".so")
    job = {"compiles": compiles, "built": built, "lib": lib, "library": str(root / f"{key}.so"),
           "link": list(argv) + list(LINK_FLAGS) + omp + [str(o) for o in objects] + ["-o", lib, "-lm"],
           "record": {"compiler": " ".join(argv), "flags": flags}, "then": then,
           "log": str(root / f"{key}.log")}
    temps = [tmp for tmp, _ in built] + [lib]
    try:
        if apart is None or not sys.executable:  # (an embedded interpreter: no Python to start)
            failed = _finish(job, parallel)
        else:
            temps.append(_temp(root, ".json"))
            Path(temps[-1]).write_text(json.dumps(job))
            failed, text = _run([sys.executable, "-I", "-S", __file__, temps[-1]], apart, wait=not _left)
            if _left and not _abandoned:  # the program ends: the build (and its temporaries) are that process's
                temps.clear()
                raise Left("the process is exiting; the build finishes in a process of its own", None)
            if failed and not _abandoned and not os.path.exists(job["log"]):  # it failed before compiling
                write_atomic(Path(job["log"]), text.encode())
        if failed:
            if _abandoned:  # stopped at exit (abandon): no log, and no source of its own left
                for _, obj in built:
                    Path(obj).with_suffix(".c").unlink(missing_ok=True)
                raise CompileError("the process is exiting", None)
            raise CompileError(f"C compiler failed; see {job['log']}", job["log"])
    finally:
        _remove(temps)
    _loaded[key] = _open(root / f"{key}.so")
    return _loaded[key], False, key


class Left(CompileError):
    """A build not waited for: the process exited (:func:`leave`) while its own process ran it."""


_left = []  # [True] once a normal exit leaves the builds running apart to finish by themselves


def leave():
    """A normal exit: a build running in a process of its own (``build(apart=...)``) is not
    waited for, and one started from now on raises :class:`Left` once it runs."""
    _left.append(True)


def _finish(job, parallel=False, session=True):
    """Compiles a :func:`build`'s units, installs the objects, links, installs the library and
    writes its ``then`` files; whether it failed (its log written, except at an abandoned exit)."""
    compiles = job["compiles"]
    run = _run if session else functools.partial(_run, session=False)
    if parallel and len(compiles) > 1:
        with concurrent.futures.ThreadPoolExecutor(min(jobs(), len(compiles))) as pool:
            results = list(pool.map(_run, compiles))
    else:  # (no pool: its threads would hold the interpreter's exit until they finish)
        results = [run(c) for c in compiles]
    if not any(failed for failed, _ in results):
        for tmp, obj in job["built"]:
            _install(tmp, Path(obj))
        results.append(run(job["link"]))
    if any(failed for failed, _ in results):
        if not _abandoned:
            write_atomic(Path(job["log"]), "".join(text for _, text in results).encode())
        return True
    _install(job["lib"], Path(job["library"]), **job["record"])
    _write_then(job["then"])
    return False


def _write_then(files):
    for path, text in files:
        write_atomic(Path(path), text.encode())


def _remove(paths):
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:  # installed, or removed by the build's own process
            pass


def _build_apart(job_file):
    """The build's own process: :func:`_finish` the job, then remove its temporaries."""
    job = json.loads(Path(job_file).read_text())
    try:
        return _finish(job, session=False)
    finally:
        _remove([tmp for tmp, _ in job["built"]] + [job["lib"], job_file])


def _temp(root, suffix):
    """A fresh temporary file's path in ``root`` (never loaded: its name starts with .tmp-)."""
    fd, path = tempfile.mkstemp(dir=root, prefix=".tmp-", suffix=suffix)
    os.close(fd)
    return path


if __name__ == "__main__":  # a build apart (build(apart=...)): python -I -S toolchain.py JOB.json
    sys.exit(int(_build_apart(sys.argv[1])))
