"""ember.profiler: recorded ops and counts, torch's table layout, Chrome trace, schedules."""
import json
import re

import pytest
import torch

import ember
from ember._ops import core
from ember.profiler import ProfilerAction, profile, record_function, schedule

BACKWARD = "autograd::engine::evaluate_function: "


def mlp(lib):
    """The backprop milestone's network (64-128-64-10, tanh)."""
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(64, 128), lib.nn.Tanh(), lib.nn.Linear(128, 64), lib.nn.Tanh(),
                             lib.nn.Linear(64, 10))


def train_step(lib, model, opt, x, y):
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


@pytest.fixture
def profiled_step():
    model = mlp(ember)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = ember.randn(32, 64), ember.arange(32) % 10
    train_step(ember, model, opt, x, y)
    with profile(record_shapes=True) as prof:
        train_step(ember, model, opt, x, y)
    return prof


def counts(prof):
    return {row.key: row.count for row in prof.key_averages()}


def test_training_step_ops_and_call_counts(profiled_step):
    c = counts(profiled_step)
    assert c["ember::Addmm"] == 3  # F.linear as torch records it: weight.t(), then addmm
    assert c["ember::Tanh"] == 2
    assert c[BACKWARD + "AddmmBackward0"] == 3
    assert c[BACKWARD + "TBackward0"] == 3
    assert c[BACKWARD + "TanhBackward0"] == 2
    assert c[BACKWARD + "torch::autograd::AccumulateGrad"] == 6  # torch's key
    # the backward of the two inner Linears computes grad input and weight: two products each,
    # the first layer's input needs no gradient: one product
    assert c["ember::Matmul"] == 5
    assert core.OBSERVERS == []


def test_backward_ops_are_children_of_their_node(profiled_step):
    nodes = [e for e in profiled_step.events() if e.name == BACKWARD + "AddmmBackward0"]
    assert sorted(sum(c.name == "ember::Matmul" for c in n.cpu_children) for n in nodes) == [1, 2, 2]
    for n in nodes:
        assert n.self_cpu_time_total == pytest.approx(n.cpu_time_total - sum(c.cpu_time_total for c in n.cpu_children))


def test_table_has_torch_headers(profiled_step):
    model = mlp(torch)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as tprof:
        train_step(torch, model, opt, torch.randn(32, 64), torch.arange(32) % 10)

    def headers(table):
        return re.split(r"\s{2,}", table.splitlines()[1].strip())
    ours = profiled_step.key_averages().table(sort_by="self_cpu_time_total", row_limit=8)
    theirs = tprof.key_averages().table(sort_by="self_cpu_time_total", row_limit=8)
    assert headers(ours) == headers(theirs)
    lines = ours.splitlines()
    assert len(lines) == 3 + 8 + 2
    assert lines[-1].startswith("Self CPU time total: ")
    self_times = [row.self_cpu_time_total for row in profiled_step.key_averages()]
    assert lines[3].split()[0] in {row.key.split()[0] for row in profiled_step.key_averages()
                                   if row.self_cpu_time_total == max(self_times)}


def test_table_with_shapes_column():
    with profile(record_shapes=True) as prof:
        ember.ones(2, 3) @ ember.ones(3, 4)
    assert "Input Shapes" not in prof.key_averages().table()
    table = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in table.splitlines()[1]
    assert "[[2, 3], [3, 4]]" in table


def test_unknown_sort_key_raises_listing_valid_keys(profiled_step):
    with pytest.raises(AttributeError, match="self_cpu_time_total.*count"):
        profiled_step.key_averages().table(sort_by="self_cpu_time")
    with torch.profiler.profile() as tprof:
        torch.ones(2) + 1
    with pytest.raises(AttributeError):  # the class torch raises
        tprof.key_averages().table(sort_by="self_cpu_time")


def test_chrome_trace_is_valid_and_nested(tmp_path):
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                ember.ones(3) + 1
            ember.ones(3) * 2
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    for e in events:
        assert {"name", "ph", "ts", "dur", "pid", "tid"} <= e.keys()
        assert e["ph"] == "X" and e["dur"] >= 0
    by_name = {e["name"]: e for e in events}

    def inside(child, parent):
        return parent["ts"] <= child["ts"] and child["ts"] + child["dur"] <= parent["ts"] + parent["dur"]
    assert inside(by_name["inner"], by_name["outer"])
    assert inside(by_name["ember::Add"], by_name["inner"])
    assert inside(by_name["ember::Mul"], by_name["outer"])
    assert not inside(by_name["ember::Mul"], by_name["inner"])
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_record_function_decorator_and_self_time():
    @record_function("helper")
    def helper(t):
        return t.exp().sum()
    helper(ember.ones(2))  # not recording: no effect
    with profile() as prof:
        helper(ember.ones(2))
        helper(ember.ones(2))
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["helper"].count == 2
    assert rows["ember::Exp"].count == 2
    children = rows["ember::Exp"].cpu_time_total + rows["ember::Sum"].cpu_time_total
    assert rows["helper"].self_cpu_time_total == pytest.approx(rows["helper"].cpu_time_total - children)


def test_group_by_input_shape():
    with profile(record_shapes=True) as prof:
        for n in (2, 2, 5):
            ember.ones(n, 3) @ ember.ones(3, 4)
    grouped = {(r.key, str(r.input_shapes)): r.count for r in prof.key_averages(group_by_input_shape=True)}
    assert grouped[("ember::Matmul", "[[2, 3], [3, 4]]")] == 2
    assert grouped[("ember::Matmul", "[[5, 3], [3, 4]]")] == 1
    with profile() as prof:
        ember.ones(2)
    with pytest.raises(RuntimeError, match="record_shapes"):
        prof.key_averages(group_by_input_shape=True)


def test_with_flops_column():
    with profile(with_flops=True) as prof:
        ember.ones(4, 3) @ ember.ones(3, 5)
        ember.nn.functional.conv2d(ember.ones(1, 2, 5, 5), ember.ones(3, 2, 3, 3))
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["ember::Matmul"].flops == 2 * 4 * 5 * 3
    assert rows["ember::Conv"].flops == 2 * 3 * 2 * 9 * 9
    assert "Total FLOPs" in prof.key_averages().table().splitlines()[1]


def test_with_stack_names_the_caller():
    with profile(with_stack=True) as prof:
        ember.ones(2) + 1
    add = next(e for e in prof.events() if e.name == "ember::Add")
    assert any("test_with_stack_names_the_caller" in line for line in add.stack)
    assert not any("ember/profiler" in line or "_ops/core.py" in line for line in add.stack)
    assert "Source Location" in prof.key_averages().table()


@pytest.mark.parametrize("kwargs", [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2),
                                    dict(wait=2, warmup=1, active=3, repeat=1, skip_first=2),
                                    dict(wait=2, warmup=1, active=1, skip_first_wait=1)])
def test_schedule_actions_equal_torch(kwargs):
    ours, theirs = schedule(**kwargs), torch.profiler.schedule(**kwargs)
    assert [ours(s).name for s in range(20)] == [theirs(s).name for s in range(20)]


def test_schedule_rejects_bad_arguments():
    with pytest.raises(AssertionError, match="active=0"):
        schedule(wait=1, warmup=1, active=0)


def test_step_records_only_active_steps():
    traces = []
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: traces.append(counts(p))) as prof:
        for step in range(6):
            for _ in range(step + 1):
                ember.ones(2).exp()
            prof.step()
    assert len(traces) == 1
    # steps 2 and 3 were recorded: 3 + 4 exps, each inside its ProfilerStep range
    assert traces[0]["ember::Exp"] == 7
    assert traces[0]["ProfilerStep*"] == 2  # one row for all steps, as in torch's tables
    assert sorted(e.trace_name for e in prof.events() if e.key == "ProfilerStep*") == [
        "ProfilerStep#2", "ProfilerStep#3"]
    assert ProfilerAction.RECORD_AND_SAVE.name == "RECORD_AND_SAVE"
    assert core.OBSERVERS == []


def test_activities_must_be_profiler_activities():
    with pytest.raises(ValueError, match="ProfilerActivity"):
        profile(activities=["cpu"])


def test_profile_memory_equals_torch():
    def run(lib, names):
        a, b = lib.ones(100, 100), lib.ones(100, 100)
        with lib.profiler.profile(profile_memory=True) as prof:
            kept = a @ b  # its storage outlives the op
            (a @ b).sum()
        del kept
        rows = {r.key: r for r in prof.key_averages()}
        table = prof.key_averages().table(sort_by="cpu_memory_usage")
        return [(rows[n].cpu_memory_usage, rows[n].self_cpu_memory_usage) for n in names], table
    ours, our_table = run(ember, ["ember::Matmul", "ember::Sum"])
    theirs, their_table = run(torch, ["aten::mm", "aten::sum"])
    assert ours == theirs == [(2 * 100 * 100 * 4, 2 * 100 * 100 * 4), (4, 4)]
    assert re.split(r"\s{2,}", our_table.splitlines()[1].strip()) == \
        re.split(r"\s{2,}", their_table.splitlines()[1].strip())
    assert our_table.splitlines()[3].split()[:1] == ["ember::Matmul"]


def test_docstring_examples_run():
    import doctest

    import ember.profiler.profiler as module
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_ops_of_another_thread_are_recorded_on_their_own_thread():
    import threading
    with profile() as prof:
        with record_function("main"):
            worker = threading.Thread(target=lambda: ember.ones(3).exp())
            worker.start()
            worker.join()
            ember.ones(3).neg()
    events = {e.name: e for e in prof.events()}
    assert events["ember::Neg"].cpu_parent is events["main"]
    assert events["ember::Exp"].cpu_parent is None  # not inside the main thread's range
    assert events["ember::Exp"].thread != events["main"].thread


def test_range_open_when_recording_stops_ends_with_the_recording():
    prof = profile()
    prof.start()
    with record_function("outer"):
        ember.ones(2).exp()
        prof.stop()
        ended = {e.name: e.end_us for e in prof.events()}
    assert {e.name: e.end_us for e in prof.events()} == ended  # leaving the range changed nothing
    assert ended["outer"] >= ended["ember::Exp"]
    assert core.OBSERVERS == []


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_optimizer_step_and_zero_grad_are_ranges_named_as_torchs(name):
    names = []
    for lib in (torch, ember):
        model = lib.nn.Linear(3, 2)
        optimizer = getattr(lib.optim, name)(model.parameters(), lr=0.1)
        with lib.profiler.profile() as prof:
            optimizer.zero_grad()
            model(lib.ones(1, 3)).sum().backward()
            optimizer.step()
        names.append(sorted(e.key for e in prof.key_averages() if e.key.startswith("Optimizer.")))
    assert names[1] == names[0] == [f"Optimizer.step#{name}.step", f"Optimizer.zero_grad#{name}.zero_grad"]
    assert [e.count for e in prof.key_averages() if e.key.startswith("Optimizer.")] == [1, 1]


@pytest.mark.parametrize("sort_by", ["cuda_time_total", "self_cuda_time_total", "device_time_total",
                                     "self_device_time_total", "self_cuda_memory_usage"])
def test_tables_sorted_by_device_keys_run_as_in_torch(profiled_step, sort_by):
    # tutorials sort by cuda_time_total; on a host-only profile torch's rows all read 0 there
    with torch.profiler.profile() as tprof:
        torch.ones(2) + 1
    tprof.key_averages().table(sort_by=sort_by, row_limit=3)
    table = profiled_step.key_averages().table(sort_by=sort_by, row_limit=3)
    assert len(table.splitlines()) == 3 + 3 + 2
    assert profiled_step.key_averages()[0].device_time_total == 0


def test_event_list_prints_as_its_table_and_sums_as_torchs():
    results = []
    for lib in (torch, ember):
        with lib.profiler.profile() as prof:
            x = lib.ones(4, 4)
            for _ in range(3):
                x = x * 2
        averages = prof.key_averages()
        assert str(averages).splitlines()[1].split()[:3] == ["Name", "Self", "CPU"]
        total = averages.total_average()
        assert total.key == "Total"
        assert total.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in averages))
        assert total.cpu_time_total_str.endswith("s")
        assert "Self CPU time total" in prof.events().table(sort_by="cpu_time")  # raw events
        counts = {e.key: e.count for e in averages}
        results.append(counts["aten::mul" if lib is torch else "ember::Mul"])
        assert total.count == sum(counts.values())
    assert results[1] == results[0] == 3


@pytest.mark.parametrize("use_gzip", [False, True])
def test_tensorboard_trace_handler_writes_one_trace_per_cycle(tmp_path, use_gzip):
    import gzip
    handler = ember.profiler.tensorboard_trace_handler(tmp_path / "log", worker_name="w", use_gzip=use_gzip)
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2), on_trace_ready=handler) as prof:
        for _ in range(4):
            ember.ones(2).exp()
            prof.step()
    files = sorted((tmp_path / "log").iterdir())
    assert len(files) == 2
    for path in files:
        assert path.name.startswith("w.") and path.name.endswith(".pt.trace.json" + (".gz" if use_gzip else ""))
        data = gzip.decompress(path.read_bytes()) if use_gzip else path.read_bytes()
        names = {e["name"] for e in json.loads(data)["traceEvents"]}
        assert "ember::Exp" in names


def test_step_ranges_average_into_one_row_and_keep_their_numbers_in_the_trace(tmp_path):
    keys = []
    for lib in (torch, ember):
        def ready(prof):
            keys.append({e.key: e.count for e in prof.key_averages() if "ProfilerStep" in e.key})
            if lib is ember:
                prof.export_chrome_trace(tmp_path / "t.json")
        schedule = lib.profiler.schedule(wait=0, warmup=1, active=3, repeat=1)
        with lib.profiler.profile(schedule=schedule, on_trace_ready=ready) as prof:
            for _ in range(4):
                lib.ones(2).exp()
                prof.step()
    assert keys[1] == keys[0] == {"ProfilerStep*": 3}
    names = {e["name"] for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"]}
    assert {"ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"} <= names


@pytest.mark.parametrize("acc_events", [False, True])
def test_acc_events_keeps_every_cycle_as_torch(acc_events):
    seen = []
    for lib in (torch, ember):
        counts_per_trace = []

        def ready(prof):
            counts_per_trace.append(sum(e.count for e in prof.key_averages() if e.key.lower().endswith("::exp")))
        schedule = lib.profiler.schedule(wait=0, warmup=1, active=1, repeat=3)
        with lib.profiler.profile(schedule=schedule, acc_events=acc_events, on_trace_ready=ready) as prof:
            for _ in range(6):
                lib.ones(2).exp()
                prof.step()
        seen.append(counts_per_trace)
    assert seen[1] == seen[0] == ([1, 2, 3] if acc_events else [1, 1, 1])


def test_export_stacks_writes_folded_stacks_and_needs_with_stack(tmp_path):
    def user_function(x):
        return (x @ x).exp().sum()
    with profile(with_stack=True) as prof:
        user_function(ember.ones(32, 32))
    path = tmp_path / "stacks.txt"
    prof.export_stacks(path, "self_cpu_time_total")
    lines = path.read_text().splitlines()
    assert lines and all(re.fullmatch(r"\S+ \d+", line) for line in lines)
    assert all(line.index("test_export_stacks") < line.index("user_function") for line in lines)  # outermost first
    with torch.profiler.profile() as tprof:
        torch.ones(2) + 1
    for prof in (tprof, profile()):
        with pytest.raises(AssertionError, match="with_stack=True"):
            prof.export_stacks(tmp_path / "no.txt", "self_cpu_time_total")


def test_stopping_while_a_node_or_op_runs_does_not_break_it():
    # Another thread (or, here, a custom backward) may stop the recording between an op's or
    # node's enter and exit: the exit finds its range closed and the computation goes on.
    prof = profile()

    class StopInside(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            prof.stop()
            return grad * 2
    x = ember.ones(3, requires_grad=True)
    y = StopInside.apply(x).sum()
    prof.start()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert any(e.name.endswith("StopInsideBackward") for e in prof.events())
    assert core.OBSERVERS == []


def test_a_thread_running_ops_survives_the_recording_stopping():
    import sys
    import threading
    errors, done = [], threading.Event()

    def work():
        x = ember.ones(16, 16)
        while not done.is_set():
            try:
                (x @ x).relu().sum()
            except Exception as e:  # noqa: BLE001 - any error in the worker fails the test
                errors.append(e)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    worker = threading.Thread(target=work)
    worker.start()
    try:
        for _ in range(100):
            with profile():
                ember.ones(2).exp()
    finally:
        done.set()
        worker.join()
        sys.setswitchinterval(interval)
    assert errors == []


@pytest.mark.parametrize("name", [None, 123])
def test_record_function_name_must_be_a_string_as_in_torch(name):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError):
            with lib.profiler.profile():
                with lib.profiler.record_function(name):
                    lib.ones(2) + 1
    assert core.OBSERVERS == []


def test_autograd_profiler_is_the_older_entry_point():
    keys = []
    for lib in (torch, ember):
        x = lib.ones(4, 4, requires_grad=True)
        with lib.autograd.profiler.profile(record_shapes=True) as prof:
            with lib.autograd.profiler.record_function("legacy_range"):
                (x @ x).sum().backward()
        keys.append({e.key for e in prof.key_averages()})
        assert "legacy_range" in keys[-1]
        assert "Self CPU" in prof.key_averages().table(sort_by="self_cpu_time_total")
        with lib.autograd.profiler.profile(enabled=False) as off:
            x @ x
        assert off is None
    assert any("MmBackward0" in k or "MatmulBackward" in k or "Backward" in k for k in keys[1])
