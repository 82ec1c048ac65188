"""pytorch/examples' fx programs (``fx/`` of a checkout at ``$EMBER_PUBLIC_PROGRAMS/examples``,
tested at commit 77f55b9; without one these tests skip) print under ``import ember as torch`` what they print under torch 2.13: traced graphs, tabular
graphs, generated code, rewritten graphs and the rewritten modules' results.

They run in a child process: a program's globals keep its Proxies alive, and with them
ember's public functions rebound to intercepting wrappers (``ember.fx.proxy``), until the
garbage collector frees them; the other tests of this process should not see that.
Not run: profiling_tracer.py (needs ``torch.ops.profiler``) and native_interpreter (a C++
extension).
"""
import json
import re
import sys
from pathlib import Path

import pytest

from examples_harness import EXAMPLES, assert_same_output
from processes import run_session

pytest.importorskip("torch")

PROGRAMS = ["custom_tracer.py", "inline_function.py", "invert.py", "replace_op.py", "proxy_based_graph_creation.py",
            "primitive_library.py", "subgraph_rewriter_basic_use.py", "wrap_output_dynamically.py",
            "module_tracer.py"]

_DRIVER = """
import json, sys, tempfile, pathlib
import pytest, torch, ember
from examples_harness import run_example
outs = {}
with pytest.MonkeyPatch.context() as mp:
    for program in sys.argv[1:]:
        outs[program] = [run_example(lib, "fx/" + program, [], pathlib.Path(tempfile.mkdtemp()), mp)
                         for lib in (torch, ember)]
print(json.dumps(outs))
"""


@pytest.fixture(scope="module")
def outputs():
    if not all((EXAMPLES / "fx" / program).is_file() for program in PROGRAMS):
        pytest.skip("no checkout of pytorch/examples with its fx programs in $EMBER_PUBLIC_PROGRAMS/examples")
    here = Path(__file__).parent
    code, out, err = run_session([sys.executable, "-c", _DRIVER, *PROGRAMS], timeout=240, cwd=here,
                                 env={"PYTHONPATH": str(here)}, name="the fx examples")
    assert code == 0, err
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize("program", PROGRAMS)
def test_fx_example_prints_what_it_prints_under_torch(program, outputs):
    torch_out, ember_out = outputs[program]
    addresses = re.compile(r" at 0x[0-9a-f]+")
    torch_out, ember_out = addresses.sub("", torch_out), addresses.sub("", ember_out)
    if program == "invert.py":
        # ember.arctan is ember.atan (one function under two names), so the inverted graph
        # names its node after atan; torch's arctan is a function of its own.
        ember_out = ember_out.replace("atan", "arctan")
    if re.search(r"\d", torch_out):
        assert_same_output(ember_out, torch_out, rtol=1e-5, atol=1e-6)
    else:
        assert ember_out == torch_out
