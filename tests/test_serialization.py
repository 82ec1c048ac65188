"""ember.save / ember.load in PyTorch's format: round trips (every dtype, 0-d, empty, views,
containers, whatever torch.save accepts), files moving both ways between ember and torch 2.13
(state_dicts, a whole training checkpoint that keeps training), and ember 0.1's own format."""
import argparse
import collections
import io
import math
import pathlib
import zipfile

import numpy as np
import pytest
import torch

import ember
import ember.nn as nn

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"]
DATA = pathlib.Path(__file__).parent / "data"


def roundtrip(obj, **load_kwargs):
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    buffer.seek(0)
    return ember.load(buffer, **load_kwargs)


def torch_bytes(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return buffer


def ember_bytes(obj):
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    buffer.seek(0)
    return buffer


def assert_same_tensor(a, b):
    assert type(a) is type(b) and a.dtype is b.dtype and a.shape == b.shape
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach()._data, b.detach()._data)


def assert_matches_torch(e, t):
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1] and tuple(e.shape) == tuple(t.shape)
    assert e.requires_grad == t.requires_grad
    np.testing.assert_array_equal(e.detach()._data, t.detach().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3, 4)])
def test_every_dtype_and_shape_roundtrips_and_crosses_to_torch(dtype, shape):
    values = np.random.default_rng(0).uniform(-50, 200, size=shape)
    t = ember.tensor(values).to(getattr(ember, dtype))
    assert_same_tensor(roundtrip(t), t)
    assert_matches_torch(t, torch.load(ember_bytes(t), weights_only=True))
    reference = torch.tensor(values).to(getattr(torch, dtype))
    assert_matches_torch(ember.load(torch_bytes(reference)), reference)


def test_views_keep_their_geometry_and_share_storage_as_in_torch():
    base = ember.arange(24.0).reshape(4, 6)
    views = {"base": base, "t": base.t(), "step": base[:, ::2], "block": base[1:3, 2:5],
             "perm": base.reshape(2, 3, 4).permute(2, 0, 1), "flip": base.flip(0)}
    out = roundtrip(views)
    seen_by_torch = torch.load(ember_bytes(views), weights_only=True)
    for key, view in views.items():
        assert_same_tensor(out[key], view)
        assert_matches_torch(view, seen_by_torch[key])
    out["base"][1, 2] = -1.0  # views of one storage stay views of it, in ember and in torch
    seen_by_torch["base"][1, 2] = -1.0
    assert out["t"][2, 1].item() == out["block"][0, 0].item() == seen_by_torch["t"][2, 1].item() == -1.0
    ref_base = torch.arange(24.0).reshape(4, 6)
    from_torch = ember.load(torch_bytes({"base": ref_base, "t": ref_base.t(), "block": ref_base[1:3, 2:5]}))
    assert from_torch["t"].stride() == (1, 6) and from_torch["block"].tolist() == ref_base[1:3, 2:5].tolist()
    from_torch["base"][1, 2] = -1.0
    assert from_torch["block"][0, 0].item() == -1.0


def test_parameters_requires_grad_and_identity_like_torch():
    p = nn.Parameter(ember.ones(2))
    t = ember.ones(2, requires_grad=True)
    obj = {"p": p, "again": p, "t": t, "frozen": nn.Parameter(ember.ones(1), requires_grad=False), "computed": t * 2}
    out = roundtrip(obj)
    ref_t = torch.ones(2, requires_grad=True)
    ref_p = torch.nn.Parameter(torch.ones(2))
    ref = torch.load(torch_bytes({"p": ref_p, "again": ref_p, "t": ref_t,
                                  "frozen": torch.nn.Parameter(torch.ones(1), requires_grad=False),
                                  "computed": ref_t * 2}))
    seen_by_torch = torch.load(ember_bytes(obj), weights_only=True)
    for key in ref:
        for other in (out, seen_by_torch):
            assert (type(other[key]).__name__ == "Parameter") == (type(ref[key]) is torch.nn.Parameter), key
            assert other[key].requires_grad == ref[key].requires_grad, key
            assert other[key].is_leaf == ref[key].is_leaf, key
    assert out["p"] is out["again"] and seen_by_torch["p"] is seen_by_torch["again"]


def test_containers_and_plain_values_roundtrip_exactly():
    od = collections.OrderedDict([("w", ember.ones(2)), ("b", ember.zeros(1))])
    od._metadata = {"": {"version": 1}}
    loop = []
    loop.append(loop)
    obj = {"tensor": ember.arange(3), 0: [1, -2 ** 70, 2.5, -0.0, math.inf, True, None, "ünï"],
           (1, "k"): ("tuple", ["list", {"inner": ember.tensor(1.5)}]), "od": od, "empty": [[], (), {}],
           "meta": [ember.float16, ember.int64, ember.Size([2, 3]), ember.device("cpu")], "nan": math.nan,
           "set": {1, 2}, "bytes": b"\x00\xff", "bytearray": bytearray(b"ab"), "complex": 1 - 2j,
           "counter": collections.Counter("aab"), "loop": loop}
    for out in (roundtrip(obj), roundtrip(obj, weights_only=False)):
        assert list(out) == list(obj)
        assert type(out["od"]) is collections.OrderedDict and out["od"]._metadata == od._metadata
        assert out[0] == obj[0] and math.copysign(1, out[0][3]) == -1 and math.isnan(out["nan"])
        assert out[(1, "k")][1][1]["inner"].item() == 1.5 and type(out[(1, "k")]) is tuple
        assert out["meta"][:2] == [ember.float16, ember.int64] and type(out["meta"][2]) is ember.Size
        assert out["meta"][3] == ember.device("cpu")
        for key in ("set", "bytes", "bytearray", "complex", "counter", "empty"):
            assert out[key] == obj[key] and type(out[key]) is type(obj[key]), key
        assert out["loop"][0] is out["loop"]
    seen_by_torch = torch.load(ember_bytes(obj), weights_only=True)
    assert seen_by_torch["meta"] == [torch.float16, torch.int64, torch.Size([2, 3]), torch.device("cpu")]
    assert seen_by_torch["od"]._metadata == od._metadata and seen_by_torch["bytes"] == b"\x00\xff"


def test_everything_torch_save_accepts_is_saved(tmp_path):
    obj = {"array": np.arange(6.0).reshape(2, 3), "scalar": np.float32(1.5), "int": np.int64(7),
           "path": pathlib.Path("runs") / "a", "namespace": argparse.Namespace(lr=0.1, epochs=3),
           "frozenset": frozenset({1})}
    ember.save(obj, tmp_path / "x.pt")
    for loaded in (ember.load(tmp_path / "x.pt", weights_only=False), torch.load(tmp_path / "x.pt", weights_only=False)):
        np.testing.assert_array_equal(loaded["array"], obj["array"])
        assert loaded["scalar"] == obj["scalar"] and type(loaded["scalar"]) is np.float32
        assert {k: loaded[k] for k in ("int", "path", "namespace", "frozenset")} == \
            {k: obj[k] for k in ("int", "path", "namespace", "frozenset")}
    # not allowed by default with weights_only, in torch and in ember, with the same remedy
    with pytest.raises(Exception, match="was not an allowed global by default") as from_torch:
        torch.load(tmp_path / "x.pt", weights_only=True)
    with pytest.raises(type(from_torch.value), match="ember.serialization.add_safe_globals"):
        ember.load(tmp_path / "x.pt")
    with pytest.raises(AttributeError, match="lambda"):
        ember.save({"f": lambda: 0}, tmp_path / "y.pt")
    assert not (tmp_path / "y.pt").exists()


def test_safe_globals_api_behaves_like_torch(tmp_path):
    rng_state = np.random.get_state()
    ember.save({"rng": rng_state}, tmp_path / "rng.pt")
    needed = [np._core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype(np.uint32))]
    assert ember.serialization.get_safe_globals() == []
    with ember.serialization.safe_globals(needed):
        assert ember.serialization.get_safe_globals() == needed
        out = ember.load(tmp_path / "rng.pt")["rng"]
    assert ember.serialization.get_safe_globals() == []
    assert out[0] == "MT19937" and np.array_equal(out[1], rng_state[1]) and out[2:] == rng_state[2:]
    ember.serialization.add_safe_globals(needed[:2])
    ember.serialization.add_safe_globals([(needed[2], "numpy.dtype"), needed[3]])
    try:
        assert ember.load(tmp_path / "rng.pt")["rng"][2] == rng_state[2]
    finally:
        ember.serialization.clear_safe_globals()
    assert ember.serialization.get_safe_globals() == []
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        ember.load(tmp_path / "rng.pt", pickle_module=__import__("pickle"))


def test_serialization_is_an_attribute_after_a_plain_import():
    # Programs write `import torch` then `torch.serialization.safe_globals(...)` (pytorch/examples'
    # super_resolve.py, generate.py): a new process, where nothing imported the submodule yet.
    import subprocess
    import sys
    code = "import {0}; print({0}.serialization.safe_globals.__name__, {0}.serialization.add_safe_globals.__name__)"
    outs = [subprocess.run([sys.executable, "-c", code.format(lib)], capture_output=True, text=True, timeout=120)
            for lib in ("torch", "ember")]
    assert outs[1].stdout == outs[0].stdout == "safe_globals add_safe_globals\n", outs[1].stderr


def test_state_dicts_cross_both_ways_between_torch_and_ember_models():
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten(),
                                    torch.nn.Linear(2 * 4 * 4, 3))
    reference(torch.randn(4, 1, 6, 6))  # moves the batch-norm running statistics
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    model.load_state_dict(ember.load(torch_bytes(reference.state_dict())))
    reference.eval()
    model.eval()
    x = np.random.default_rng(1).standard_normal((2, 1, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(model(ember.tensor(x)).detach().numpy(),
                               reference(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    back = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten(),
                               torch.nn.Linear(2 * 4 * 4, 3))
    back.load_state_dict(torch.load(ember_bytes(model.state_dict()), weights_only=True))
    for (key, a), (_, b) in zip(reference.state_dict().items(), back.state_dict().items()):
        assert torch.equal(a, b), key


def test_a_torch_training_checkpoint_loads_into_ember_and_training_continues(tmp_path):
    torch.manual_seed(0)
    x = np.random.default_rng(2).standard_normal((16, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32))[:, None]
    reference = torch.nn.Linear(4, 1)
    optimizer = torch.optim.Adam(reference.parameters(), lr=0.05)

    def torch_step():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(reference(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        optimizer.step()
    for _ in range(3):
        torch_step()
    np.random.seed(5)
    torch.save({"model": reference.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3,
                "numpy_rng": np.random.get_state()}, tmp_path / "checkpoint.pt")
    for _ in range(2):
        torch_step()

    with ember.serialization.safe_globals([np._core.multiarray._reconstruct, np.ndarray, np.dtype,
                                           type(np.dtype(np.uint32))]):
        checkpoint = ember.load(tmp_path / "checkpoint.pt")
    model = nn.Linear(4, 1)
    model.load_state_dict(checkpoint["model"])
    resumed = ember.optim.Adam(model.parameters(), lr=0.05)
    resumed.load_state_dict(checkpoint["optimizer"])
    np.random.set_state(checkpoint["numpy_rng"])
    assert checkpoint["epoch"] == 3 and np.random.randint(1 << 30) == np.random.RandomState(5).randint(1 << 30)
    for _ in range(2):
        resumed.zero_grad()
        nn.functional.mse_loss(model(ember.tensor(x)), ember.tensor(y)).backward()
        resumed.step()
    np.testing.assert_allclose(model.weight.detach().numpy(), reference.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.bias.detach().numpy(), reference.bias.detach().numpy(), rtol=1e-5, atol=1e-6)
    # ...and back: torch resumes from ember's checkpoint
    ember.save({"model": model.state_dict(), "optimizer": resumed.state_dict(), "epoch": 5}, tmp_path / "back.pt")
    again = torch.load(tmp_path / "back.pt", weights_only=True)
    reference.load_state_dict(again["model"])
    optimizer.load_state_dict(again["optimizer"])
    torch_step()


def test_whole_modules_are_pickled_by_reference_and_need_weights_only_false(tmp_path):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    ember.save(model, tmp_path / "model.pt")
    with pytest.raises(Exception, match="GLOBAL ember.nn.modules.container.Sequential was not an allowed global"):
        ember.load(tmp_path / "model.pt")
    loaded = ember.load(tmp_path / "model.pt", weights_only=False)
    x = ember.randn(5, 3)
    assert type(loaded) is nn.Sequential and loaded(x).tolist() == model(x).tolist()
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
    torch.save(reference, tmp_path / "torch_model.pt")
    as_ember = ember.load(tmp_path / "torch_model.pt", weights_only=False)  # torch.nn names -> ember.nn
    assert type(as_ember) is nn.Sequential
    np.testing.assert_allclose(as_ember(ember.ones(1, 3)).detach().numpy(),
                               reference(torch.ones(1, 3)).detach().numpy(), rtol=1e-6)


def test_file_layout_is_torchs_documented_one(tmp_path):
    ember.save({"a": ember.ones(3), "b": ember.zeros(2, dtype=ember.int64)}, tmp_path / "x.pt")
    with zipfile.ZipFile(tmp_path / "x.pt") as archive:
        names = archive.namelist()
        assert names[0] == "archive/data.pkl" and {"archive/version", "archive/byteorder", "archive/data/0",
                                                   "archive/data/1"} <= set(names)
        assert archive.read("archive/version") == b"3\n" and archive.read("archive/byteorder") == b"little"
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if info.filename.startswith("archive/data/"):
                start = info.header_offset + 30 + len(info.filename) + len(info.extra)
                assert start % 64 == 0, info.filename  # storages aligned as torch writes them


def test_map_location(tmp_path):
    t = ember.arange(4)
    for location in ("cpu", ember.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage,
                     lambda storage, loc: None):
        assert_same_tensor(roundtrip(t, map_location=location), t)
    with pytest.raises(RuntimeError, match="cuda"):
        roundtrip(t, map_location="cuda")
    # a checkpoint saved on a GPU: its storages say "cuda:0"
    data = ember_bytes(ember.ones(2)).getvalue().replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    with zipfile.ZipFile(io.BytesIO(ember_bytes(ember.ones(2)).getvalue())) as src:
        pkl = src.read("archive/data.pkl").replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, pkl if name.endswith("data.pkl") else src.read(name))
    with pytest.raises(RuntimeError, match="saved on 'cuda:0'.*map_location='cpu'"):
        ember.load(io.BytesIO(out.getvalue()))
    assert ember.load(io.BytesIO(out.getvalue()), map_location="cpu").tolist() == [1.0, 1.0]
    assert ember.load(io.BytesIO(out.getvalue()), map_location={"cuda:0": "cpu"}).tolist() == [1.0, 1.0]


def test_file_objects_paths_and_unseekable_streams(tmp_path):
    t = ember.arange(4)
    with open(tmp_path / "f.pt", "wb") as f:
        ember.save(t, f)
    with open(tmp_path / "f.pt", "rb") as f:
        assert_same_tensor(ember.load(f), t)
    assert_same_tensor(ember.load(str(tmp_path / "f.pt")), t)

    class Stream:  # readable, not seekable
        def __init__(self, data):
            self.data = io.BytesIO(data)

        def read(self, n=-1):
            return self.data.read(n)
    assert_same_tensor(ember.load(Stream((tmp_path / "f.pt").read_bytes())), t)


def test_ember_0_1_checkpoints_still_load():
    small = ember.load(DATA / "ember-0.1-small.pt")
    assert small["w"].tolist() == [1.0] * 100 and small["b"].tolist() == [0.0] * 3
    mixed = ember.load(DATA / "ember-0.1-mixed.pt")
    assert mixed["od"]["w"].tolist() == [[0.0, 1.0], [2.0, 3.0]] and mixed["od"]._metadata == {"": {"version": 1}}
    assert type(mixed["p"]) is nn.Parameter and mixed["p"].requires_grad
    assert mixed[0][:3] == [1, -2 ** 70, 2.5] and mixed[0][3:] == [math.inf, None, "ünï", (1, "k")]
    assert mixed["meta"] == [ember.float16, ember.Size([2, 3]), ember.device("cpu")]
    assert mixed["a"] is mixed["c"] and mixed["i8"].dtype is ember.int8 and math.isnan(mixed["nan"])
    mixed["a"][0] = 9.0
    assert mixed["tied"][0].item() == 9.0
