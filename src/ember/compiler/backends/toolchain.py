"""Finding a C compiler and building shared libraries through an on-disk cache.

The compiler is found as users have it: ``$CC``, then ``cc``/``gcc``/``clang`` on ``PATH``,
then the ``ziglang`` wheel (``python -m ziglang cc``, the ``compile`` extra). Libraries are
cached under ``$XDG_CACHE_HOME/ember/compile`` (``~/.cache/ember/compile`` by default), in a
directory only the user can write, named by the SHA-256 of source, compiler, flags and CPU.
Each library sits beside a record of its own SHA-256 and is loaded only when they match, so a
corrupt or tampered entry is rebuilt; every file is written to a temporary name and moved in
place with ``os.replace``, so a process killed mid-build leaves no half-written entry.
"""
import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["CompileError", "find_compiler", "cache_dir", "build", "load", "write_atomic", "FLAGS"]

# nan and inf must survive -ffast-math: the kernels test for them and the tests check them.
FLAGS = ("-O3", "-march=native", "-ffast-math", "-fno-finite-math-only", "-fPIC")
# Linked in a second step without -ffast-math: GCC before 13 links crtfastmath.o into a
# -ffast-math shared library, whose loading switches the whole process (NumPy included) to
# flushing subnormals to zero.
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
    """Machine and CPU feature flags: -march=native code is only valid on the same CPU."""
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.machine()} {platform.processor()} {flags}"


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


@functools.lru_cache(maxsize=None)
def _runtime_headers():
    """The headers the generated code includes: part of its content, so part of the key."""
    return "".join(p.read_text() for p in sorted(RUNTIME.glob("*.h")))


def write_atomic(path, data):
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


def load(key):
    """The cached library of ``key`` (a :func:`build` key), or None when it is missing, corrupt
    or does not match its recorded SHA-256."""
    if key in _loaded:
        return _loaded[key]
    root = cache_dir()
    lib, record = root / f"{key}.so", root / f"{key}.json"
    try:
        if json.loads(record.read_text())["sha256"] == _digest(lib):
            _loaded[key] = ctypes.CDLL(str(lib))
            return _loaded[key]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing, corrupt or tampered: to be built again
    return None


def build(source, argv, *, openmp=False):
    """Compiles ``source`` (C text) into a shared library through the cache; returns
    ``(ctypes.CDLL, cached: bool, key)``. Raises CompileError (with the log's path) on failure."""
    flags = list(FLAGS) + (_openmp_flags(argv) if openmp else [])
    key = hashlib.sha256("\0".join([source, _runtime_headers(), compiler_identity(tuple(argv)), " ".join(flags),
                                    cpu_identity()]).encode()).hexdigest()[:32]
    found = load(key)
    if found is not None:
        return found, True, key
    root = cache_dir()
    lib, record = root / f"{key}.so", root / f"{key}.json"
    c_file = root / f"{key}.c"
    write_atomic(c_file, source.encode())
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".tmp-", suffix=".so")
    os.close(fd)
    obj = tmp[:-3] + ".o"
    omp = flags[len(FLAGS):]
    commands = [list(argv) + flags + ["-I", str(RUNTIME), "-c", str(c_file), "-o", obj],
                list(argv) + list(LINK_FLAGS) + omp + [obj, "-o", tmp, "-lm"]]
    log_text = ""
    try:
        for cmd in commands:
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                failed, text = out.returncode != 0, out.stdout + out.stderr
            except (OSError, subprocess.SubprocessError) as e:
                failed, text = True, str(e)
            log_text += " ".join(cmd) + "\n" + text
            if failed:
                log = root / f"{key}.log"
                write_atomic(log, log_text.encode())
                raise CompileError(f"C compiler failed; see {log}", str(log))
        os.replace(tmp, lib)
    finally:
        for leftover in (obj, tmp):
            if os.path.exists(leftover):
                os.unlink(leftover)
    write_atomic(record, json.dumps({"sha256": _digest(lib), "compiler": " ".join(argv),
                                      "flags": flags}).encode())
    _loaded[key] = ctypes.CDLL(str(lib))
    return _loaded[key], False, key
