"""ember.utils.safetensors against files written and read by safetensors.torch."""
import numpy as np
import pytest
import torch
from safetensors.torch import load_file as torch_load_file, save_file as torch_save_file

import ember
from ember.utils import safetensors as st

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"]


def test_files_cross_both_ways_with_safetensors_torch(tmp_path):
    rng = np.random.default_rng(0)
    reference = {name: torch.tensor(rng.uniform(-50, 200, (3, 2))).to(getattr(torch, name)) for name in DTYPES}
    reference["scalar"] = torch.tensor(2.5)
    reference["empty"] = torch.zeros(0, 4)
    torch_save_file(reference, tmp_path / "torch.safetensors", metadata={"epoch": "3"})
    loaded = st.load_file(tmp_path / "torch.safetensors")
    assert set(loaded) == set(reference)
    for name, t in reference.items():
        assert loaded[name].dtype.name == str(t.dtype).split(".")[1] and tuple(loaded[name].shape) == tuple(t.shape)
        np.testing.assert_array_equal(loaded[name]._data, t.numpy())
    loaded["float32"][0, 0] = 7.0  # writable, owned memory
    base = ember.arange(12.0).reshape(3, 4)
    mine = {"weight": base.t(), "bias": ember.tensor([1, 2], dtype=ember.int64), "flag": ember.tensor([True])}
    st.save_file(mine, tmp_path / "ember.safetensors", metadata={"source": "ember"})
    back = torch_load_file(tmp_path / "ember.safetensors")
    for name, t in mine.items():
        np.testing.assert_array_equal(back[name].numpy(), t._data)
    assert {k: v.tolist() for k, v in st.load(st.save(mine)).items()} == {k: v.tolist() for k, v in mine.items()}
    assert [p.name for p in tmp_path.iterdir() if "tmp" in p.name] == []


def test_bad_input_is_refused(tmp_path):
    with pytest.raises(TypeError, match="dict of str to Tensor"):
        st.save({"w": np.ones(2)})
    torch_save_file({"w": torch.tensor([1.5, -2.25], dtype=torch.bfloat16)}, tmp_path / "bf16.safetensors")
    loaded = st.load_file(tmp_path / "bf16.safetensors")["w"]  # bfloat16 is an ember dtype
    assert loaded.dtype is ember.bfloat16 and loaded.float().tolist() == [1.5, -2.25]
    torch_save_file({"w": torch.zeros(2, dtype=torch.float8_e4m3fn)}, tmp_path / "f8.safetensors")
    with pytest.raises(TypeError, match="float8_e4m3fn"):
        st.load_file(tmp_path / "f8.safetensors")
    (tmp_path / "bad.safetensors").write_bytes(b"\xff" * 16)
    with pytest.raises(Exception, match="(?i)header|invalid|error"):
        st.load_file(tmp_path / "bad.safetensors")
    with pytest.raises(RuntimeError, match="cuda"):
        st.load_file(tmp_path / "bf16.safetensors", device="cuda")
