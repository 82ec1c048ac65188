"""ember.compile of calls with a Tensor subclass that has its own ``__torch_function__`` and of
calls under a ``TorchFunctionMode`` (around the compiled call or entered inside it): traced as
torch 2.13's dynamo traces them, with its frame counts, result types and values, and guarded on
the mode stack's types (another mode class, or none, recompiles; another object of the class
does not). Checked against real torch with each library's ``CompileCounter``."""
import importlib

import torch

import ember


def _counter(lib):
    """A fresh ``CompileCounter``, the library's compile caches emptied (``_f`` is compiled by several tests)."""
    importlib.import_module(f"{lib.__name__}._dynamo").reset()
    return importlib.import_module(f"{lib.__name__}._dynamo.testing").CompileCounter()


def _f(x, y):
    return (x + y).sin() * 2


def _tagging(lib):
    class Tag(lib.Tensor):  # its own __torch_function__, no side effect: one frame in torch
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})
    return Tag


def _plus_mode(lib):
    class Plus(lib.overrides.TorchFunctionMode):  # a mode changing results: traced into the graph
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out + 1 if func.__name__ == "sin" else out
    return Plus


def _subclass_run(lib):
    Tag = _tagging(lib)
    counter, out = _counter(lib), []
    run = lib.compile(_f, backend=counter)
    x, y = lib.tensor([0.5, -1.0, 2.0]), lib.tensor([1.0, 0.25, -3.0])
    for _ in range(3):
        r = run(x.as_subclass(Tag), y)
        out.append((type(r).__name__, [round(v, 5) for v in r.tolist()], counter.frame_count, counter.op_count))
    r = run(x, y)
    out.append((type(r).__name__, counter.frame_count))
    return out


def test_own_torch_function_subclass_is_one_graph():
    assert _subclass_run(ember) == _subclass_run(torch)


def _mode_run(lib):
    """(the results, each call's frame and op counts): a mode around the call, a new object of
    its class each call (the guard is on the type), then no mode, a subclass of it, it again."""
    Plus = _plus_mode(lib)
    counter, results, counts = _counter(lib), [], []
    run = lib.compile(_f, backend=counter)
    x, y = lib.tensor([0.5, -1.0, 2.0]), lib.tensor([1.0, 0.25, -3.0])

    class Other(Plus):
        pass
    for mode in (Plus, Plus, Plus, None, Other, Plus):
        if mode is None:
            results.append(run(x, y))
        else:
            with mode():
                results.append(run(x, y))
        counts.append((counter.frame_count, counter.op_count))
    return [[round(v, 5) for v in r.tolist()] for r in results], counts


def test_mode_around_the_call_is_traced_and_guarded():
    (got, counts), (_, torch_counts) = _mode_run(ember), _mode_run(torch)
    assert counts == torch_counts == [(1, 4)] * 3 + [(2, 7), (3, 11), (3, 11)]
    # eager torch's values: torch 2.13's compiled call applies a result-changing mode twice here
    x, y = torch.tensor([0.5, -1.0, 2.0]), torch.tensor([1.0, 0.25, -3.0])
    with _plus_mode(torch)():
        moded = [round(v, 5) for v in _f(x, y).tolist()]
    plain = [round(v, 5) for v in _f(x, y).tolist()]
    assert got == [moded] * 3 + [plain, moded, moded]


def _inside_run(lib, compiled=True):
    """(values, frame and op counts) of a function entering a mode, called twice, then twice
    inside another mode (the stack differs at the call: another graph)."""
    Plus = _plus_mode(lib)

    def g(x, y):
        with Plus():
            z = (x + y).sin()
        return z * 2
    counter, values, counts = _counter(lib), [], []
    run = lib.compile(g, backend=counter) if compiled else g
    x, y = lib.tensor([0.5, -1.0]), lib.tensor([1.0, 0.25])
    for outer in (None, None, Plus, Plus):
        if outer is None:
            values.append(run(x, y))
        else:
            with outer():
                values.append(run(x, y))
        counts.append((counter.frame_count, counter.op_count))
    return [[round(v, 5) for v in r.tolist()] for r in values], counts


def test_mode_entered_inside_the_function():
    (got, counts), (_, torch_counts) = _inside_run(ember), _inside_run(torch)
    assert counts == torch_counts == [(1, 4), (1, 4), (2, 9), (2, 9)]
    assert got == _inside_run(torch, compiled=False)[0]  # (eager's: torch's compile applies the outer mode twice)


def _logging_mode_run(lib, fullgraph=False):
    class Log(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.calls.append(func.__name__)
            return func(*args, **(kwargs or {}))
    run = lib.compile(_f, backend=_counter(lib), fullgraph=fullgraph)
    x, y = lib.tensor([0.5, -1.0]), lib.tensor([1.0, 0.25])
    seen = []
    for _ in range(3):
        with Log() as mode:
            r = run(x, y)
        # (ember's own reads of the inputs' requires_grad/grad_fn still reach a mode: see the report)
        seen.append(([round(v, 5) for v in r.tolist()], [c for c in mode.calls if c != "__get__"]))
    return seen


def test_logging_mode_sees_its_calls_on_every_call():
    # torch replays the mode's appends after its graph; ember finds them a side effect and runs
    # the call eagerly: what the user observes is the same
    assert _logging_mode_run(ember) == _logging_mode_run(torch)
    # (fullgraph=True: torch's graph replays the appends; ember's runs such a call eagerly, as
    # before, rather than raise for the side effect)
    assert _logging_mode_run(ember, fullgraph=True) == _logging_mode_run(torch, fullgraph=True)


def _inner_log_run(lib):
    calls = []

    class Log(lib.overrides.TorchFunctionMode):  # appends to a list around its class, not its own
        def __torch_function__(self, func, types, args=(), kwargs=None):
            calls.append(lib.overrides.resolve_name(func))
            return func(*args, **(kwargs or {}))

    def h(x, y):
        with Log():
            z = (x + y).sin()
        return z * 2
    run = lib.compile(h, backend=_counter(lib))
    x, seen = lib.tensor([0.5, -1.0]), []
    for _ in range(3):
        calls.clear()
        seen.append(([round(v, 5) for v in run(x, x).tolist()], list(calls)))
    calls.clear()
    with Log():
        x.tolist()  # (named as before the recordings: Tensor's methods were patched while they ran)
    return seen, calls


def test_mode_entered_inside_logs_every_call():
    # ember's replays skipped the appends (the list was no global nor closure of ``h``); now a
    # side effect, so the call runs eagerly (torch 2.13: a graph break there, 2 frames per call)
    assert _inner_log_run(ember) == _inner_log_run(torch)


def test_mode_entered_in_a_recording_leaves_tensors_methods_as_before():
    # the mode enables the wrappers while the recording has patched Tensor's methods: they wrapped
    # the patched ones and kept them after the recording and after disable() (each later replay
    # registered a parameter's hook twice, a later .tolist() broke graphs)
    from ember import _tensor_subclass
    before = {n: vars(ember.Tensor).get(n) for n in ("register_hook", "tolist", "requires_grad", "grad")}
    _inner_log_run(ember)
    _tensor_subclass.disable()
    assert {n: vars(ember.Tensor).get(n) for n in before} == before
