"""Puts tests/ and tests/ops/ on sys.path so test files import the shared helpers
(``torchcompare``, ``harness``) by name, whichever folder pytest starts in."""
import os
import sys

_HERE = os.path.dirname(__file__)
for _path in (_HERE, os.path.join(_HERE, "ops")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

# Under PYTHONDONTWRITEBYTECODE (this machine sets it) every run compiled ember's ~470 modules
# and rewrote every test file's asserts again, and each subprocess the tests start (MPI ranks,
# the CLI, cold compiles) compiled ember once more. What is imported until collection ends is
# cached in __pycache__ (gitignored; subprocesses read it); the tests run with the setting as it
# was, so a module a test writes into tmp_path gets no __pycache__ beside it.
_NO_BYTECODE = sys.dont_write_bytecode
sys.dont_write_bytecode = False

try:  # torch is the oracle; one thread keeps its pool from stalling on a busy 2-core machine
    import torch

    torch.set_num_threads(1)
except ImportError:
    pass


import numpy as np
import pytest

import ember
from ember import _tensor_subclass

try:  # property tests (test_text.py): the same examples every run, and no per-example deadline
    # (200 ms by default, which a busy machine or a full run's garbage collection can overrun: one
    # slow example, fast when Hypothesis ran it again, is its FlakyFailure)
    from hypothesis import HealthCheck, settings

    settings.register_profile("ember-tests", deadline=None, derandomize=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("ember-tests")
except ImportError:
    pass


@pytest.fixture(autouse=True)
def _seeded():
    """Every test starts from the same random state, whatever ran before it, so a test that
    passes alone passes in the suite (and one that fails, fails every time)."""
    ember.manual_seed(0)
    np.random.seed(0)
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        # the CPU generator is all torch.manual_seed seeds here; it also queues a CUDA seed with
        # a formatted stack trace (~1 ms a test, 17k tests)
        torch.default_generator.manual_seed(0)
        if torch.get_num_threads() != 1:
            # ember.set_num_threads limits every thread pool threadpoolctl finds, torch's OpenMP
            # included: a test that set and restored ember's count left torch's at 2
            # (test_blas_threads, test_fft, test_top_level_names), so the tests after it ran torch
            # otherwise than alone (its parallel sums, its spinning pool on a busy machine)
            torch.set_num_threads(1)
    yield
    if _tensor_subclass.enabled():  # a test's Tensor subclass (or a walk importing ember.overrides)
        _tensor_subclass.disable()  # leaves no wrapped namespaces to the tests after it


def pytest_collection_finish(session):
    sys.dont_write_bytecode = _NO_BYTECODE  # (see the top of this file)


def pytest_addoption(parser):
    parser.addoption("--check-shape-rules", action="store_true",
                     help="compare every op call's Op.infer with its result (tests/ops/shape_rules.py)")


@pytest.fixture(autouse=True)
def _shape_rules(request):
    """Under ``--check-shape-rules``, every op a test dispatches is checked against its rule
    (``pytest --check-shape-rules tests/ops tests/nn``; not for tests that check that no
    observer is installed, as tests/profiler's do)."""
    if not request.config.getoption("--check-shape-rules"):
        yield
        return
    from shape_rules import RuleChecker, watching
    checker = RuleChecker()
    with watching(checker):
        yield
    assert not checker.mismatches, checker.mismatches[:5]
