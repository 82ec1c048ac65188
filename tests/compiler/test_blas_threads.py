"""The BLAS thread count around compiled products (runtime/ember_graph.h, em_blas_threads) and
eager ones (ember._backend.matmul): one process-wide count of NumPy's OpenBLAS that both set,
each asking the library before a product rather than remembering what it set last.

Remembered, the count went stale: an eager evaluation left the BLAS on 2 threads and every
small product of the compiled training steps after it ran on 2, its worker thread spinning
between them (the transformer milestone with --compile: the worker used as much CPU as the
steps). Checked through the mechanism (the count the library holds after each call), not
timings, so that a loaded CI machine cannot make it flaky.
"""
import os
import subprocess
import sys

import pytest
import threadpoolctl

import ember
from ember import _backend
from ember.compiler.backends import toolchain

pytestmark = [
    pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler"),
    pytest.mark.skipif(_backend.get_num_threads() is None, reason="NumPy's BLAS is not an OpenBLAS ember drives"),
    pytest.mark.usefixtures("fresh_cache"),
]


@pytest.fixture
def two_threads():
    """At most 2 BLAS threads for the test (set even on a 1-CPU machine: the count is what is
    checked, not the speed), the caller's count restored after."""
    before = _backend.get_num_threads()
    _backend.set_num_threads(2)
    yield
    _backend.set_num_threads(before)


def blas_threads():
    """The thread count NumPy's OpenBLAS holds now (asked through threadpoolctl)."""
    [lib] = [lib for lib in threadpoolctl.ThreadpoolController().lib_controllers
             if lib.internal_api == "openblas" and "numpy" in lib.filepath]
    return lib.get_num_threads()


def compiled_product(m, k, n):
    """A compiled float64 product (no packed kernel; too large for the direct one), called
    until its C runs (the first call captures it, eagerly)."""
    step = ember.compile(lambda a, b: a @ b)
    a, b = ember.randn(m, k, dtype=ember.float64), ember.randn(k, n, dtype=ember.float64)
    step(a, b)
    step(a, b)
    return lambda: step(a, b)


def eager_product(n):
    a = ember.randn(n, n)
    return a @ a


SMALL, LARGE = 128, 512  # 2^21 and 2^27 multiply-adds, below and above both thresholds (2^26)


def test_compiled_small_product_after_eager_large_one_runs_on_one_thread(two_threads):
    small = compiled_product(SMALL, SMALL + 32, SMALL)
    eager_product(SMALL)
    assert blas_threads() == 1
    eager_product(LARGE)  # as an evaluation between compiled training steps
    assert blas_threads() == 2
    small()  # its last call set 1: the count must be asked again, not remembered
    assert blas_threads() == 1


def test_eager_small_product_after_compiled_large_one_runs_on_one_thread(two_threads):
    large = compiled_product(LARGE, LARGE, LARGE)
    eager_product(SMALL)
    assert blas_threads() == 1
    large()
    assert blas_threads() == 2
    eager_product(SMALL)  # eager's last product set 1: compiled code has set 2 since
    assert blas_threads() == 1


_OPENMP_GRAPH = """
import os, ember
f = ember.compile(lambda x: (x * 2 + 1).tanh())  # one loop over 2M elements: OpenMP
x = ember.ones(1 << 21)
f(x), f(x)
print(os.environ.get("OMP_WAIT_POLICY"), any("libgomp" in line for line in open("/proc/self/maps")))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/maps")
@pytest.mark.parametrize("chosen", [None, "ACTIVE"])
def test_openmp_threads_wait_passively_unless_the_user_chose(tmp_path, chosen):
    # libgomp's default spin-wait on a loaded machine: a compiled LeNet-5 call 24-596 ms against
    # 16 ms passive (toolchain._open); checked through the setting libgomp reads when it loads
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path), **({"OMP_WAIT_POLICY": chosen} if chosen else {}))
    run = subprocess.run([sys.executable, "-c", _OPENMP_GRAPH], capture_output=True, text=True, env=env, timeout=240)
    assert run.returncode == 0, run.stderr[-2000:]
    policy, gomp = run.stdout.split()
    assert policy == (chosen or "PASSIVE")
    if toolchain._openmp_flags(toolchain.find_compiler()):  # GCC: the graph's loop links libgomp
        assert gomp == "True"  # (a one-dimensional parallel loop failed to compile: ivdep after omp for)
