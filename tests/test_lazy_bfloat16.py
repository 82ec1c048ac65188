"""bfloat16's NumPy type comes from ml_dtypes, imported on bfloat16's first use rather than by
``import ember`` (it cost ~0.6 s of CPU, half of the import). ``ember.bfloat16`` exists from the
start; an ml_dtypes array the program made itself before ember touched bfloat16 is taken as
bfloat16 too, and so is a safetensors file's. Checked in a fresh interpreter, where nothing has
imported ml_dtypes yet."""
import json
import os
import subprocess
import sys

import numpy as np
import torch

import ember

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src")

_SCRIPT = r"""
import json, sys
import ember
loaded = {"import": "ml_dtypes" in sys.modules}
x = ember.tensor([[3, -1], [2, 5]])
str(x), str(x.float()), x.sort(), x.float().cumsum(0), x.float().half().cumsum(1), ember.finfo(ember.float32)
ember.testing.make_tensor(2, dtype=ember.float32, device="cpu")
loaded["float and int ops"] = "ml_dtypes" in sys.modules
attrs = [ember.bfloat16.itemsize, ember.bfloat16.is_floating_point, repr(ember.bfloat16)]
loaded["bfloat16's attributes"] = "ml_dtypes" in sys.modules
if sys.argv[1] == "user-array-first":  # the program brings an ml_dtypes array before ember used bfloat16
    import ml_dtypes, numpy as np
    t = ember.from_numpy(np.array([1.5, -2.25, 3e38], dtype=ml_dtypes.bfloat16))
elif sys.argv[1] == "safetensors-first":  # a file written elsewhere (the safetensors package names the dtype)
    t = ember.utils.safetensors.load_file(sys.argv[2])["t"]
else:
    t = ember.tensor([1.5, -2.25, 3e38], dtype=ember.bfloat16)
u = t * 2 - 1
print(json.dumps({"loaded": loaded, "attrs": attrs, "dtype": repr(u.dtype), "same dtype": u.dtype is ember.bfloat16,
                  "values": u.float().tolist(), "printed": str(u), "np": str(ember.bfloat16.np),
                  "eps": ember.finfo(ember.bfloat16).eps}))
"""


def _run(order, *args):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
    done = subprocess.run([sys.executable, "-c", _SCRIPT, order, *args], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_and_float_ops_leave_ml_dtypes_unloaded_and_bfloat16_works_on_first_use(tmp_path):
    want = torch.tensor([1.5, -2.25, 3e38], dtype=torch.bfloat16) * 2 - 1
    written = str(tmp_path / "t.safetensors")
    ember.utils.safetensors.save_file({"t": ember.tensor([1.5, -2.25, 3e38], dtype=ember.bfloat16)}, written)
    for order, args in (("ember-first", ()), ("user-array-first", ()), ("safetensors-first", (written,))):
        got = _run(order, *args)
        assert got["loaded"] == {"import": False, "float and int ops": False, "bfloat16's attributes": False}, order
        assert got["attrs"] == [2, True, "torch.bfloat16"]
        assert got["dtype"] == "torch.bfloat16" and got["same dtype"] and got["np"] == "bfloat16"
        np.testing.assert_array_equal(got["values"], want.float().tolist())
        assert got["printed"] == str(want)
        assert got["eps"] == torch.finfo(torch.bfloat16).eps
