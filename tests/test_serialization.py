"""ember.save / ember.load: round trips (every dtype, 0-d, empty, non-contiguous, nested
containers, state_dicts), sharing as torch keeps it, atomic writes, and files that must be
refused without running anything from them."""
import builtins
import collections
import io
import math
import os
import pickle
import zipfile

import numpy as np
import pytest
import torch

import ember
import ember.nn as nn

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"]


def roundtrip(obj, **load_kwargs):
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    buffer.seek(0)
    return ember.load(buffer, **load_kwargs)


def assert_same_tensor(a, b):
    assert type(a) is type(b) and a.dtype is b.dtype and a.shape == b.shape
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach()._data, b.detach()._data)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3, 4)])
def test_tensor_roundtrip_every_dtype_and_shape(dtype, shape):
    values = np.random.default_rng(0).uniform(-50, 200, size=shape)
    t = ember.tensor(values).to(getattr(ember, dtype))
    assert_same_tensor(roundtrip(t), t)


def test_non_contiguous_views_roundtrip():
    base = ember.arange(24.0).reshape(4, 6)
    for view in (base.t(), base[:, ::2], base[1:3, 2:5], base.reshape(2, 3, 4).permute(2, 0, 1)):
        assert not view.is_contiguous() or view is base
        assert_same_tensor(roundtrip(view), view)


def test_requires_grad_and_parameters_come_back_like_torch():
    p = nn.Parameter(ember.ones(2))
    t = ember.ones(2, requires_grad=True)
    out = roundtrip({"p": p, "t": t, "frozen": nn.Parameter(ember.ones(1), requires_grad=False),
                     "computed": t * 2})
    ref = torch.load(_torch_bytes({"p": torch.nn.Parameter(torch.ones(2)), "t": torch.ones(2, requires_grad=True),
                                   "frozen": torch.nn.Parameter(torch.ones(1), requires_grad=False),
                                   "computed": torch.ones(2, requires_grad=True) * 2}))
    for key in ref:
        assert (type(out[key]) is nn.Parameter) == (type(ref[key]) is torch.nn.Parameter), key
        assert out[key].requires_grad == ref[key].requires_grad, key
        assert out[key].is_leaf == ref[key].is_leaf, key


def _torch_bytes(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return buffer


def test_nested_containers_and_plain_values_roundtrip_exactly():
    od = collections.OrderedDict([("w", ember.ones(2)), ("b", ember.zeros(1))])
    od._metadata = {"": {"version": 1}}
    obj = {"tensor": ember.arange(3), 0: [1, -2 ** 70, 2.5, -0.0, math.inf, -math.inf, True, False, None, "ünï"],
           (1, "k"): ("tuple", ["list", {"inner": ember.tensor(1.5)}]), "od": od, "empty": [[], (), {}],
           "meta": [ember.float16, ember.int64, ember.Size([2, 3]), ember.device("cpu")], "nan": math.nan}
    out = roundtrip(obj)
    assert list(out) == list(obj)
    assert type(out["od"]) is collections.OrderedDict and out["od"]._metadata == od._metadata
    assert_same_tensor(out["od"]["w"], od["w"])
    assert out[0][:4] == obj[0][:4] and out[0][4:] == obj[0][4:]
    assert math.copysign(1, out[0][3]) == -1
    assert type(out[(1, "k")]) is tuple and type(out[(1, "k")][1]) is list
    assert_same_tensor(out[(1, "k")][1][1]["inner"], obj[(1, "k")][1][1]["inner"])
    assert out["empty"] == [[], (), {}] and type(out["empty"][1]) is tuple
    assert out["meta"][:2] == [ember.float16, ember.int64]
    assert type(out["meta"][2]) is ember.Size and out["meta"][2] == ember.Size([2, 3])
    assert out["meta"][3] == ember.device("cpu") and math.isnan(out["nan"])


def test_shared_tensors_keep_torch_identity_and_memory_semantics():
    x = ember.arange(6.0)
    out = roundtrip({"a": x, "c": x, "tied": x.detach(), "slice": x[2:4]})
    ref = torch.load(_torch_bytes({"a": (y := torch.arange(6.0)), "c": y, "tied": y.detach(), "slice": y[2:4]}))
    assert (out["a"] is out["c"]) == (ref["a"] is ref["c"])
    assert (out["tied"] is out["a"]) == (ref["tied"] is ref["a"])
    out["a"][0] = 100.0
    ref["a"][0] = 100.0
    assert out["tied"][0].item() == ref["tied"][0].item() == 100.0  # same memory, as in torch
    assert out["slice"].tolist() == [2.0, 3.0]  # an overlapping view is saved on its own


def test_module_and_optimizer_state_dicts_roundtrip(tmp_path):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    path = tmp_path / "model.pt"
    ember.save(model.state_dict(), path)
    fresh = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    fresh.load_state_dict(ember.load(path))
    for (k, a), (_, b) in zip(model.state_dict().items(), fresh.state_dict().items()):
        np.testing.assert_array_equal(a._data, b._data, err_msg=k)
    optimizer_state = {"state": {0: {"step": ember.tensor(3.0), "exp_avg": ember.zeros(4, 3)}, 1: {}},
                       "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0,
                                         "amsgrad": False, "foreach": None, "params": [0, 1, 2, 3]}]}
    ember.save(optimizer_state, str(path))
    out = ember.load(str(path))
    assert out["param_groups"] == optimizer_state["param_groups"]
    assert list(out["state"]) == [0, 1] and out["state"][1] == {}
    assert_same_tensor(out["state"][0]["exp_avg"], optimizer_state["state"][0]["exp_avg"])


def test_file_objects_and_map_location(tmp_path):
    t = ember.arange(4)
    with open(tmp_path / "f.pt", "wb") as f:
        ember.save(t, f)
    with open(tmp_path / "f.pt", "rb") as f:
        assert_same_tensor(ember.load(f), t)

    class Stream:  # readable, not seekable
        def __init__(self, data):
            self.data = io.BytesIO(data)

        def read(self, n=-1):
            return self.data.read(n)
    assert_same_tensor(ember.load(Stream((tmp_path / "f.pt").read_bytes())), t)
    for location in ("cpu", ember.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage):
        assert_same_tensor(roundtrip(t, map_location=location), t)
    assert roundtrip(t, map_location=lambda storage, loc: ember.zeros(1)).tolist() == [0.0]
    with pytest.raises(RuntimeError):
        roundtrip(t, map_location="cuda")


def test_unsupported_objects_raise_type_error_and_write_nothing(tmp_path):
    path = tmp_path / "x.pt"
    for bad, type_name in [({"a": object()}, "builtins.object"), ([np.float32(1.0)], "numpy.float32"),
                           ({"f": lambda: 0}, "function"), (collections.defaultdict(list), "defaultdict")]:
        with pytest.raises(TypeError, match=type_name):
            ember.save(bad, path)
        assert not path.exists()
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        ember.save(loop, path)
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
        ember.save(ember.ones(1), tmp_path / "missing" / "x.pt")


def test_failure_mid_save_leaves_the_existing_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(3)}, path)
    before = path.read_bytes()
    real = np.lib.format.write_array

    def write_half_then_fail(fp, array, *args, **kwargs):
        real(fp, array, *args, **kwargs)
        raise OSError("disk full")
    monkeypatch.setattr(np.lib.format, "write_array", write_half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"w": ember.zeros(1000)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]  # no temporary file left behind
    assert ember.load(path)["w"].tolist() == [1.0, 1.0, 1.0]


class Payload:
    """Unpickling this creates the sentinel file (a stand-in for arbitrary code)."""

    def __init__(self, sentinel):
        self.sentinel = sentinel

    def __reduce__(self):
        return (builtins.open, (self.sentinel, "w"))


def test_malicious_files_are_refused_without_running_code(tmp_path):
    sentinel = tmp_path / "pwned"
    payload = pickle.dumps({"w": Payload(str(sentinel))})

    raw = tmp_path / "raw.pt"
    raw.write_bytes(payload)
    with zipfile.ZipFile(tmp_path / "torch_style.pt", "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/version", "3\n")
    good = io.BytesIO()
    ember.save(ember.ones(2), good)
    with zipfile.ZipFile(io.BytesIO(good.getvalue())) as src, zipfile.ZipFile(tmp_path / "npy.pt", "w") as z:
        z.writestr("archive/ember.json", src.read("archive/ember.json"))
        array_file = io.BytesIO()
        np.save(array_file, np.array([Payload(str(sentinel))], dtype=object), allow_pickle=True)
        z.writestr("archive/data/0.npy", array_file.getvalue())
    torch.save({"w": torch.ones(2)}, tmp_path / "real_torch.pt")

    for name, match in [("raw.pt", "not a readable zip archive"), ("torch_style.pt", "PyTorch"),
                        ("npy.pt", "archive/data/0.npy holds unsupported dtype object"), ("real_torch.pt", "PyTorch")]:
        with pytest.raises(RuntimeError, match=match):
            ember.load(tmp_path / name, weights_only=False)
        assert not sentinel.exists(), name


def test_truncated_and_corrupt_files_raise_runtime_error(tmp_path):
    buffer = io.BytesIO()
    ember.save({"w": ember.ones(100), "b": ember.zeros(3)}, buffer)
    data = buffer.getvalue()
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        with pytest.raises(RuntimeError, match="ember.load"):
            ember.load(io.BytesIO(data[:cut]))

    def rewrite(index_text=None, drop=None, first_array=None):
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
            for item in src.namelist():
                if item == drop:
                    continue
                body = src.read(item)
                if item == "archive/ember.json" and index_text is not None:
                    body = index_text(body.decode()).encode()
                if item == "archive/data/0.npy" and first_array is not None:
                    body = first_array(body)
                dst.writestr(item, body)
        out.seek(0)
        return out
    cases = [(rewrite(lambda s: s[:-5]), "not valid JSON"),
             (rewrite(lambda s: s.replace('"version": 1', '"version": 99')), "version 99"),
             (rewrite(lambda s: s.replace('"float32"', '"int8"', 1)), "storage holds"),
             (rewrite(lambda s: s.replace('"type": "tensor"', '"type": "exec"', 1)), "unknown entry type"),
             (rewrite(lambda s: s.replace('"index": 1', '"index": 7')), "out of range"),
             (rewrite(drop="archive/data/1.npy"), "cannot read archive/data/1.npy"),
             (rewrite(drop="archive/ember.json"), "has no archive/ember.json"),
             # a header asking for 400 GB over 400 bytes of data, with a valid CRC
             (rewrite(first_array=lambda b: b.replace(b"(100,), }" + b" " * 8, b"(99999999999,), }")),
              "archive/data/0.npy is truncated or its header is corrupt"),
             (rewrite(first_array=lambda b: b[:-4]), "archive/data/0.npy is truncated")]
    for f, match in cases:
        with pytest.raises(RuntimeError, match=match):
            ember.load(f)
    flipped = bytearray(data)
    flipped[data.index(b"\x93NUMPY") + 200] ^= 0xFF  # inside the first array's values
    with pytest.raises(RuntimeError, match="ember.load"):
        ember.load(io.BytesIO(bytes(flipped)))
