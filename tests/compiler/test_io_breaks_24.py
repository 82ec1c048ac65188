"""Input and output inside a compiled function are graph breaks (compiler/side_effects.py's
``breaking_io``): a replay runs the graph only, so a ``buf.write("a")`` or a file written beside
tensor ops happened once, at the recording, and never again (``'a'`` after three calls where
eager writes ``'aaa'``); torch's dynamo breaks on such calls. Each case is checked against the
same function run eagerly."""
import io

import numpy as np
import pytest

import ember
from ember._dynamo.exc import Unsupported


def _three_calls(fn, backend="inductor"):
    compiled = ember.compile(fn, backend=backend)
    return [compiled(ember.full((2,), float(k))).numpy() for k in range(3)]


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_a_stream_write_runs_on_every_call(backend):
    buf = io.StringIO()

    def f(x):
        y = x * 2
        buf.write("a")
        return y + 1
    results = _three_calls(f, backend)
    assert buf.getvalue() == "aaa"
    np.testing.assert_array_equal(results[2], [5.0, 5.0])


def test_a_file_written_and_read_on_every_call(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text("")

    def f(x):
        with open(path, "a") as fh:
            fh.write("z")
        with open(path) as fh:
            n = len(fh.read())
        return x + n
    results = _three_calls(f)
    assert path.read_text() == "zzz"
    assert [float(r[0]) for r in results] == [1.0, 3.0, 5.0]  # k + the file's length after the write


def test_explain_names_the_write_and_the_pieces_around_it():
    buf = io.BytesIO()

    def f(x):
        y = x.sin()
        buf.write(b"1")
        return y.cos()
    report = ember._dynamo.explain(f)(ember.ones(2))
    assert (report.graph_count, report.graph_break_count) == (2, 1)
    assert "BytesIO.write() is input or output" in str(report.break_reasons[0])


def test_fullgraph_raises_naming_the_write():
    buf = io.StringIO()

    def f(x):
        buf.write("a")
        return x * 2
    with pytest.raises(Unsupported, match="StringIO.write"):
        ember.compile(f, fullgraph=True)(ember.ones(2))


def test_library_io_and_another_profiler_are_left_alone():
    """ember's own files (the compile cache) do not break; under cProfile no hook is installed,
    and the profiler keeps running (a capture there behaves as before)."""
    import cProfile
    compiled = ember.compile(lambda x: (x * 3).exp())
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        for _ in range(3):
            out = compiled(ember.ones(2))
    finally:
        profiler.disable()
    np.testing.assert_allclose(out.numpy(), np.exp([3.0, 3.0]), rtol=1e-6)
    assert ember._dynamo.explain(lambda x: (x * 3).exp())(ember.ones(2)).graph_break_count == 0
