"""REVIEW28B: ember.compile with a callable backend against torch 2.13 over several calls.
Found: ``print(..., file=buf)`` inside a function a callable backend
compiles writes twice on the first call (custom_backend.first_split_run re-runs the split
function; quiet_output dropped only writes to sys.stdout/sys.stderr; now any print on its thread)."""
import io

import torch

import ember


def _backend(gm, example_inputs):
    return gm.forward


def _prints_counted(lib):
    buf = io.StringIO()

    def f(x):
        print("step", file=buf)
        return x * 2 + 1
    compiled = lib.compile(f, backend=_backend)
    return [(compiled(lib.tensor([1.0, float(i)])).tolist(), buf.getvalue().count("step")) for i in range(3)]


def test_a_print_to_a_file_in_a_callable_backend_s_function_is_written_once_per_call():
    assert _prints_counted(ember) == _prints_counted(torch)
