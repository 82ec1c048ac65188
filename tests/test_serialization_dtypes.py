"""Checkpoints of bfloat16, uint16, uint32 and uint64 tensors between ember and torch 2.13.
torch writes bfloat16 as a ``BFloat16Storage`` under ``_rebuild_tensor_v2`` and the unsigned
dtypes as ``_rebuild_tensor_v3`` over a ``torch.storage.UntypedStorage`` of bytes: files torch
writes load in ember (values bit for bit, dtype, shape, strides and offsets of views, shared
storage kept shared), and ember's files load with ``torch.load(weights_only=True)``; ember's
``data.pkl`` is byte for byte torch's."""
import io
import os
import zipfile

import numpy as np
import pytest
import torch

import ember
from test_serialization import ember_bytes, torch_bytes

NEW = ["bfloat16", "uint16", "uint32", "uint64"]


def values(dtype, n=24, seed=0):
    """A torch tensor of ``n`` values of ``dtype`` with its edge values (for bfloat16: ±inf, nan,
    -0.0, a subnormal, the largest finite numbers; for the unsigned: 0 and the maximum)."""
    rng = np.random.default_rng(seed)
    if dtype == "bfloat16":
        edges = [np.inf, -np.inf, np.nan, -0.0, 1e-40, 3.3e38, -3.3e38, 1.0]
        floats = np.concatenate([edges, rng.normal(0, 1e3, n - len(edges))]).astype(np.float32)
        return torch.from_numpy(floats).to(torch.bfloat16)
    top = np.iinfo(dtype).max
    ints = np.concatenate([np.array([0, 1, top, top - 1], dtype), rng.integers(0, top, n - 4, dtype, endpoint=True)])
    return torch.from_numpy(ints)


def bits(t):
    """The tensor's elements in C order as bytes (nan payloads and -0.0 included)."""
    if isinstance(t, torch.Tensor):
        return t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    return np.ascontiguousarray(t.detach()._data).tobytes()


def assert_same(e, t):
    """ember tensor ``e`` is torch tensor ``t``: class, dtype, geometry, requires_grad, bits."""
    assert type(e).__name__ == type(t).__name__ and str(e.dtype) == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride(), (e.stride(), t.stride())
    assert e.storage_offset() == t.storage_offset() and e.requires_grad == t.requires_grad
    assert e.untyped_storage().nbytes() == t.untyped_storage().nbytes()
    assert bits(e) == bits(t)


def views(base, parameter):
    """Tensors over one storage (views of every kind, a 0-size one), a 0-d tensor and a Parameter."""
    return {"base": base, "t": base.t(), "step": base[:, ::2], "block": base[1:3, 2:5], "empty": base[:0],
            "scalar": base[1, 1].clone(), "param": parameter(base[0].clone(), requires_grad=False)}


def pickle_of(buffer):
    with zipfile.ZipFile(buffer) as archive:
        return archive.read("archive/data.pkl")


@pytest.mark.parametrize("dtype", NEW)
def test_torch_files_load_in_ember_and_go_back_to_torch(dtype):
    original = views(values(dtype).reshape(4, 6), torch.nn.Parameter)
    loaded = ember.load(torch_bytes(original))
    for key in original:
        assert_same(loaded[key], original[key])
    pointers = {key: loaded[key].untyped_storage().data_ptr() for key in ("base", "t", "step", "block")}
    assert len(set(pointers.values())) == 1, pointers  # one storage, as in the file
    loaded["base"][2, 3] = 7  # a write through the base shows in its views
    original["base"][2, 3] = 7
    assert loaded["block"][1, 1].item() == loaded["t"][3, 2].item() == 7
    seen_by_torch = torch.load(ember_bytes(loaded), weights_only=True)
    for key in original:
        assert_same(loaded[key], seen_by_torch[key])
        assert bits(seen_by_torch[key]) == bits(original[key])
    seen_by_torch["base"][0, 0] = 5
    assert seen_by_torch["t"][0, 0].item() == seen_by_torch["step"][0, 0].item() == 5


@pytest.mark.parametrize("dtype", NEW)
def test_ember_files_are_torchs_byte_for_byte_and_load_with_weights_only(dtype):
    reference = values(dtype, seed=1).reshape(4, 6)
    made_in_ember = ember.from_numpy(reference.view(torch.int16 if dtype == "bfloat16" else reference.dtype)
                                     .numpy().copy())
    if dtype == "bfloat16":
        made_in_ember = made_in_ember.view(ember.bfloat16)
    obj = views(made_in_ember, ember.nn.Parameter)
    ref = views(reference, torch.nn.Parameter)
    seen_by_torch = torch.load(ember_bytes(obj), weights_only=True)
    for key in ref:
        assert_same(obj[key], seen_by_torch[key])
        assert bits(seen_by_torch[key]) == bits(ref[key])
    plain = {key: obj[key] for key in ("base", "t", "step", "empty", "scalar")}
    assert pickle_of(ember_bytes(plain)) == pickle_of(torch_bytes({key: ref[key] for key in plain}))


def test_state_dicts_mixing_dtypes_cross_both_ways(tmp_path):
    reference = torch.nn.Linear(3, 2).to(torch.bfloat16)
    for name, dtype in [("counts", "uint16"), ("ids", "uint32"), ("hashes", "uint64")]:
        reference.register_buffer(name, values(dtype, n=5))
    reference.register_buffer("mask", torch.tensor([True, False]))
    reference.register_buffer("steps", torch.tensor(7))
    model = ember.nn.Linear(3, 2).to(ember.bfloat16)
    for name, dtype in [("counts", ember.uint16), ("ids", ember.uint32), ("hashes", ember.uint64),
                        ("mask", ember.bool), ("steps", ember.int64)]:
        model.register_buffer(name, ember.zeros(5 if dtype in (ember.uint16, ember.uint32, ember.uint64) else
                                                (2 if dtype is ember.bool else ()), dtype=dtype))
    torch.save(reference.state_dict(), tmp_path / "torch.pt")
    model.load_state_dict(ember.load(tmp_path / "torch.pt"))
    for key, value in reference.state_dict().items():
        assert_same(model.state_dict()[key], value)
    ember.save(model.state_dict(), tmp_path / "ember.pt")
    assert sorted(os.listdir(tmp_path)) == ["ember.pt", "torch.pt"]  # written atomically: no temporary left
    fresh = torch.nn.Linear(3, 2).to(torch.bfloat16)
    for key, value in reference.state_dict().items():
        if key not in ("weight", "bias"):
            fresh.register_buffer(key, torch.zeros_like(value))
    fresh.load_state_dict(torch.load(tmp_path / "ember.pt", weights_only=True))
    for key, value in reference.state_dict().items():
        assert bits(fresh.state_dict()[key]) == bits(value) and fresh.state_dict()[key].dtype == value.dtype


def test_one_untyped_storage_under_two_unsigned_dtypes_stays_shared():
    wide = values("uint32", n=4)
    narrow = wide.view(torch.uint16)[1:]  # torch writes one untyped storage for both
    loaded = ember.load(torch_bytes({"wide": wide, "narrow": narrow}))
    assert_same(loaded["wide"], wide)
    assert_same(loaded["narrow"], narrow)
    loaded["wide"][0] = 0x00050004
    assert loaded["narrow"][0].item() == 5  # the high half of the first uint32 (little-endian)
    assert loaded["wide"].untyped_storage().data_ptr() == loaded["narrow"].untyped_storage().data_ptr()


def big_endian(buffer, widths):
    """The checkpoint in ``buffer`` as a big-endian machine writes it: each storage's numbers
    byte-reversed, ``byteorder`` "big"; ``widths`` gives each storage's bytes per number."""
    out = io.BytesIO()
    with zipfile.ZipFile(buffer) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("/byteorder"):
                data = b"big"
            elif name.startswith("archive/data/"):
                data = np.frombuffer(data, np.uint8).reshape(-1, widths[name[len("archive/data/"):]])[:, ::-1].tobytes()
            dst.writestr(name, data)
    out.seek(0)
    return out


def test_files_of_the_other_byte_order_load():
    obj = {"b": values("bfloat16"), "u": values("uint32"), "c": torch.tensor([1 + 2j, -3.5j], dtype=torch.complex64),
           "h": values("uint16")[::2]}
    loaded = ember.load(big_endian(torch_bytes(obj), {"0": 2, "1": 4, "2": 4, "3": 2}))  # complex64: two floats
    for key in obj:
        assert_same(loaded[key], obj[key])
    wide = values("uint32")
    mixed = big_endian(torch_bytes({"wide": wide, "narrow": wide.view(torch.uint16)}), {"0": 4})
    with pytest.raises(RuntimeError, match="storage 0 is read as torch.uint16 and as numbers of 4 bytes"):
        ember.load(mixed)
