"""The widened compile fuzzer (fuzz_wide_32.py): two seeded programs by default, compiled
against eager and against torch 2.13 (a training step compiles for seconds: long runs only);
long runs on request:
``EMBER_FUZZ_WIDE=N`` programs and ``EMBER_FUZZ_STEPS=N`` steps from ``EMBER_FUZZ_SEED``
(default 0), e.g. ``EMBER_FUZZ_WIDE=500 pytest -q tests/compiler/test_fuzz_wide_32.py -k long``.
Seeds run in session 32: programs 0-2599, steps 0-399 (and test_fuzz.py's 10000-11399)."""
import os
import warnings

import numpy as np
import pytest

import ember
from ember.compiler.backends import toolchain
from fuzz_wide_32 import WideProgram, run_program, run_step

pytestmark = [pytest.mark.usefixtures("fresh_cache"),
              pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")]


def test_generator_records_eager_shapes():
    """Every value's recorded shape (from which later statements pick partners and in-place
    operands) is the shape eager computes, on 10 programs."""
    for seed in range(10):
        program = WideProgram(seed, 8)
        namespace = {"torch": ember, "F": ember.nn.functional}
        names = [v.name for v in program.values]
        exec(program.source().rsplit("return", 1)[0] + f"return ({', '.join(names)},)\n", namespace)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = namespace["program"](*program.make_inputs(ember, seed))
        for value, result in zip(program.values, values):
            assert tuple(result.shape) == value.shape, f"seed {seed}: {value.name} {tuple(result.shape)} vs {value.shape}"


@pytest.mark.parametrize("seed", [25, 132])  # (an input's view returned twice; a write through a clone's view)
def test_wide_programs(seed):
    run_program(seed)


def _long(run, count):
    first = int(os.environ.get("EMBER_FUZZ_SEED", 0))
    failures = []
    for seed in range(first, first + count):
        try:
            run(seed)
        except AssertionError as error:
            failures.append(f"--- seed {seed}: {str(error)[:1500]}")
    assert not failures, f"{len(failures)} of {count} failing:\n" + "\n".join(failures)


@pytest.mark.skipif(not os.environ.get("EMBER_FUZZ_WIDE"), reason="set EMBER_FUZZ_WIDE=N for the long run")
def test_wide_long():
    _long(run_program, int(os.environ["EMBER_FUZZ_WIDE"]))


@pytest.mark.skipif(not os.environ.get("EMBER_FUZZ_STEPS"), reason="set EMBER_FUZZ_STEPS=N for the long run")
def test_steps_long():
    _long(run_step, int(os.environ["EMBER_FUZZ_STEPS"]))
