"""``nn.attention.sdpa_kernel``/``SDPBackend`` (newer GPT programs choose the attention kernel)
against torch 2.13 on the CPU: the switches inside and after the block, the same attention
where MATH or FLASH_ATTENTION is allowed, torch's error where neither is, its AssertionError."""
import numpy as np
import pytest
import torch

import ember


def switches(lib):
    c = lib.backends.cuda
    return c.flash_sdp_enabled(), c.math_sdp_enabled(), c.mem_efficient_sdp_enabled(), c.cudnn_sdp_enabled()


@pytest.mark.parametrize("choice", [["MATH"], ["FLASH_ATTENTION"], ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"],
                                    ["EFFICIENT_ATTENTION"], ["CUDNN_ATTENTION", "EFFICIENT_ATTENTION"], []])
def test_sdpa_kernel_sets_torchs_switches_and_computes_or_refuses_as_torch(choice):
    q = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype("float32")
    results = []
    for lib in (torch, ember):
        attention = lib.nn.attention
        backends = [getattr(attention.SDPBackend, name) for name in choice]
        with attention.sdpa_kernel(backends if len(backends) != 1 else backends[0]):
            inside = switches(lib)
            x = lib.tensor(q)
            try:
                out = lib.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=True).numpy()
            except RuntimeError as error:
                out = str(error)
        results.append((inside, switches(lib), out))
    (t_in, t_after, t_out), (e_in, e_after, e_out) = results
    assert e_in == t_in and e_after == t_after == (True, True, True, True)
    if isinstance(t_out, str):
        assert e_out == t_out
    else:
        np.testing.assert_allclose(e_out, t_out, rtol=1e-6, atol=1e-6)


def test_sdp_backend_names_numbers_and_errors_are_torchs():
    for name, member in torch.nn.attention.SDPBackend.__members__.items():
        mine = getattr(ember.nn.attention.SDPBackend, name)
        assert int(mine) == int(member) and str(mine) == str(member) and repr(mine) == repr(member)
    for lib in (torch, ember):
        with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend or a list of SDPBackend "
                                                 "instances, got str"):
            with lib.nn.attention.sdpa_kernel("flash"):
                pass
