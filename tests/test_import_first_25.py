"""Each subpackage imports first in a fresh process (session 25): ``import ember.fx`` (and
``torch.fx`` after ``import ember as torch``, loaded on first use) raised a circular-import
AttributeError when the compiler's callable-backend module subclassed fx's GraphModule while fx
was half imported; the test suite's order (the compiler's tests first) hid it."""
import os
import subprocess
import sys

_FIRST = ["ember.fx", "ember.export", "ember.jit", "ember.compiler", "ember._dynamo", "ember._inductor", "ember._functorch"]  # (the compiler's importers)


def test_every_subpackage_imports_first_in_a_fresh_process():
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    runs = [subprocess.Popen([sys.executable, "-c", f"import {m}"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE) for m in _FIRST]
    runs.append(subprocess.Popen([sys.executable, "-c", "import ember as torch; torch.fx.symbolic_trace"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    failed = []
    for name, proc in zip(_FIRST + ["torch.fx after import ember as torch"], runs):
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            failed.append((name, "timed out"))
            continue
        if proc.returncode:
            failed.append((name, err.decode(errors="replace").strip().splitlines()[-1]))
    assert not failed, failed
