"""Running a command as the tests must: in a session of its own under a timeout, and every
process it started killed when it ends or hangs, so multi-process code never stalls the suite."""
import os
import signal
import subprocess

import pytest


def run_session(command, timeout, *, cwd=None, env=None, name=None):
    """``(returncode, stdout, stderr)`` of ``command``; the test fails, after the whole session
    is killed, when it outlives ``timeout`` seconds. ``env`` is added to this process's."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            start_new_session=True, env={**os.environ, **(env or {})})
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{name or command} did not finish in {timeout} s\n{out}\n{err}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, out, err
