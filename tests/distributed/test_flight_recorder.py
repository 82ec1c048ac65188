"""The flight recorder's entries in one process (a singleton MPI job, in a subprocess with a
timeout): each is described while its operation runs, so it keeps shapes, dtypes and the
caller's line, and no tensor or frame outlives the call."""
import json
import sys
import textwrap

import pytest

from processes import run_session

pytest.importorskip("mpi4py", reason="ember.distributed needs mpi4py (the distributed extra)")

_SCRIPT = textwrap.dedent('''
    import gc, json, sys, weakref
    import ember as torch
    import ember.distributed as dist
    from ember.distributed import _flight_recorder as fr
    dist.init_process_group()
    t = torch.ones(3, 2, dtype=torch.float64)
    alive = weakref.ref(t)
    def step():
        dist.all_reduce(t)  # SYNC
    step()
    work = dist.all_gather_into_tensor(torch.zeros(3, 2), torch.ones(3, 2), async_op=True)  # ASYNC
    work.wait()
    try:
        dist.broadcast(torch.ones(2), src=5)  # BAD
    except ValueError:  # torch's error for a rank outside the group
        pass
    del t
    gc.collect()
    undescribed = sum(e[fr._FRAMES] is None for e in fr._RECORDER.entries())  # before a dump describes them
    entries = json.loads(fr._dump_fr_trace_json())["entries"]
    print(json.dumps({"undescribed": undescribed, "tensor_alive": alive() is not None,
                      "entries": [(e["profiling_name"], e["input_sizes"], e["input_dtypes"], e["output_sizes"],
                                   e["state"], e["frames"][0]["line"]) for e in entries],
                      "frames": [[f["name"] for f in e["frames"]] for e in entries],
                      "times": [(e["time_created_ns"], e["time_discovered_started_ns"],
                                 e["time_discovered_completed_ns"]) for e in entries]}))
    dist.destroy_process_group()
''')


def test_entries_are_described_while_their_operation_runs(tmp_path):
    script = tmp_path / "fr.py"
    script.write_text(_SCRIPT)
    lines = _SCRIPT.splitlines()
    line = {tag: next(i + 1 for i, text in enumerate(lines) if text.endswith(f"# {tag}"))
            for tag in ("SYNC", "ASYNC", "BAD")}
    code, out, err = run_session([sys.executable, str(script)], 60, name="flight recorder script")
    assert code == 0, err
    found = json.loads(out.strip().splitlines()[-1])
    assert found["undescribed"] == 0 and not found["tensor_alive"]
    assert found["entries"] == [
        ["mpi:all_reduce", [[3, 2]], ["Double"], [[3, 2]], "completed", line["SYNC"]],
        ["mpi:all_gather_into_tensor", [[3, 2]], ["Float"], [[3, 2]], "completed", line["ASYNC"]],
        ["mpi:broadcast", [[2]], ["Float"], [[2]], "started", line["BAD"]],
    ]
    # Every operation starts (its agreement check is posted) as its entry is made: the started
    # time is the creation time; a completed one's completion comes after it, the others' is 0.
    (sync, *_), (async_, *_), (bad, *_) = times = found["times"]
    assert [started for _, started, _ in times] == [sync, async_, bad] and sync <= async_ <= bad
    assert [completed > created for created, _, completed in times[:2]] == [True, True] and times[2][2] == 0
    # Only the caller's frame by default (walking the stack is most of recording's cost)
    assert found["frames"] == [["step"], ["<module>"], ["<module>"]]


def test_stack_depth_is_asked_for(tmp_path):
    script = tmp_path / "fr.py"
    script.write_text(_SCRIPT)
    code, out, err = run_session([sys.executable, str(script)], 60, env={"EMBER_FR_STACK_DEPTH": "8"},
                                 name="flight recorder script")
    assert code == 0, err
    assert json.loads(out.strip().splitlines()[-1])["frames"] == [["step", "<module>"], ["<module>"], ["<module>"]]
