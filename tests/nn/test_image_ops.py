"""Image functions (pad in every mode, interpolate, unfold/fold, pixel shuffle) and their
layers against torch: values, gradients (second order through the upstream gradient for the
linear ones), odd sizes, and the errors torch raises."""
import itertools

import numpy as np
import pytest
import torch

import ember
from harness import Case, I, R, T, check, params
from torchcompare import assert_close


def F(L):
    return L.nn.functional


def pad_cases():
    cases = []
    for mode in ("constant", "reflect", "replicate", "circular"):
        pad = lambda L, x, p, mode=mode: F(L).pad(x, p, mode=mode)
        cases += [
            Case(f"pad-{mode}-1d", lambda L, x, pad=pad: pad(L, x, (2, 1)), R(2, 3, 5)),
            Case(f"pad-{mode}-1d-unbatched", lambda L, x, pad=pad: pad(L, x, (0, 3)), R(3, 5)),
            Case(f"pad-{mode}-2d", lambda L, x, pad=pad: pad(L, x, (1, 2, 3, 0)), R(2, 3, 4, 5)),
            Case(f"pad-{mode}-2d-unbatched", lambda L, x, pad=pad: pad(L, x, (2, 2, 1, 1)), R(3, 4, 5)),
            Case(f"pad-{mode}-2d-transposed", lambda L, x, pad=pad: pad(L, x, (1, 1, 2, 2)), T(R(2, 3, 5, 4))),
            Case(f"pad-{mode}-3d", lambda L, x, pad=pad: pad(L, x, (1, 0, 0, 2, 1, 1)), R(1, 2, 3, 4, 3)),
            Case(f"pad-{mode}-full-width", lambda L, x, pad=pad: pad(L, x, (3, 3)), R(1, 2, 4)),
            Case(f"pad-{mode}-too-wide", lambda L, x, pad=pad: pad(L, x, (5, 0)), R(1, 2, 4)),
            Case(f"pad-{mode}-rank", lambda L, x, pad=pad: pad(L, x, (1, 1)), R(1, 2, 3, 4)),
            Case(f"pad-{mode}-crop-left", lambda L, x, pad=pad: pad(L, x, (-2, 3)), R(1, 2, 5)),
            Case(f"pad-{mode}-crop-right", lambda L, x, pad=pad: pad(L, x, (1, 2, 3, -2)), R(1, 2, 5, 4)),
        ]
    return cases + [
        Case("pad-constant-value", lambda L, x: F(L).pad(x, (1, 2, 0, 1), value=-2.5), R(2, 3, 4)),
        Case("pad-constant-negative", lambda L, x: F(L).pad(x, (-1, 2, 1, -2)), R(2, 4, 5)),
        Case("pad-constant-crop-all", lambda L, x: F(L).pad(x, (-2, -2)), R(2, 4)),
        Case("pad-constant-crop-too-much", lambda L, x: F(L).pad(x, (-3, -2)), R(2, 4)),
        Case("pad-constant-int", lambda L, x: F(L).pad(x, (1, 1), value=7), I(2, 3), dtypes=(None,)),
        Case("pad-odd-length", lambda L, x: F(L).pad(x, (1, 1, 1)), R(2, 3, 4)),
        Case("pad-too-long", lambda L, x: F(L).pad(x, (1,) * 6), R(2, 3)),
        Case("pad-unknown-mode", lambda L, x: F(L).pad(x, (1, 1), mode="wrap"), R(2, 3, 4)),
        Case("pad-reflect-value", lambda L, x: F(L).pad(x, (1, 1), mode="reflect", value=1.0), R(2, 3, 4)),
    ]


def interpolate_cases():
    cases = []
    sizes = (dict(size=(7, 3)), dict(size=1), dict(scale_factor=2), dict(scale_factor=(1.7, 0.6)),
             dict(scale_factor=0.5), dict(scale_factor=(2.5, 1.5), recompute_scale_factor=True))
    for (mode, align), (i, kw) in itertools.product(
            (("nearest", None), ("nearest-exact", None), ("bilinear", False), ("bilinear", True),
             ("bicubic", False), ("bicubic", True), ("area", None)), enumerate(sizes)):
        cases.append(Case(f"interpolate-{mode}-{align}-{i}", lambda L, x, mode=mode, align=align, kw=kw:
                          F(L).interpolate(x, mode=mode, align_corners=align, **kw), R(2, 3, 4, 5)))
    for (mode, align), size in itertools.product(
            (("nearest", None), ("linear", False), ("linear", True), ("area", None)), (9, 3, 1)):
        cases.append(Case(f"interpolate-1d-{mode}-{align}-{size}", lambda L, x, mode=mode, align=align, size=size:
                          F(L).interpolate(x, size=size, mode=mode, align_corners=align), R(2, 3, 4)))
    for mode, align in (("nearest", None), ("bilinear", False), ("bicubic", True)):
        # Long dims take the gather path rather than a resampling matrix.
        cases.append(Case(f"interpolate-long-{mode}", lambda L, x, mode=mode, align=align:
                          F(L).interpolate(x, size=(3, 301), mode=mode, align_corners=align), R(1, 2, 2, 130)))
    cases.append(Case("interpolate-long-1d-down", lambda L, x: F(L).interpolate(x, size=97, mode="linear"),
                      R(1, 2, 300)))
    return cases + [
        Case("interpolate-from-one-pixel", lambda L, x: F(L).interpolate(x, size=(3, 2), mode="bilinear"),
             R(1, 2, 1, 1)),
        Case("upsample-nearest", lambda L, x: F(L).upsample_nearest(x, scale_factor=3), R(1, 2, 2, 3)),
        Case("upsample-bilinear", lambda L, x: F(L).upsample_bilinear(x, size=(5, 4)), R(1, 2, 2, 3)),
        Case("interpolate-size-and-scale", lambda L, x: F(L).interpolate(x, size=3, scale_factor=2), R(1, 1, 2, 2)),
        Case("interpolate-neither", lambda L, x: F(L).interpolate(x), R(1, 1, 2, 2)),
        Case("interpolate-align-nearest", lambda L, x: F(L).interpolate(x, 3, align_corners=True), R(1, 1, 2, 2)),
        Case("interpolate-size-length", lambda L, x: F(L).interpolate(x, size=(3, 3, 3)), R(1, 1, 2, 2)),
        Case("interpolate-scale-length", lambda L, x: F(L).interpolate(x, scale_factor=(2, 2, 2)), R(1, 1, 2, 2)),
        Case("interpolate-bilinear-3d", lambda L, x: F(L).interpolate(x, 4, mode="bilinear"), R(1, 2, 3)),
        Case("interpolate-linear-4d", lambda L, x: F(L).interpolate(x, 4, mode="linear"), R(1, 2, 3, 3)),
        Case("interpolate-unknown-mode", lambda L, x: F(L).interpolate(x, 4, mode="cubic"), R(1, 2, 3, 3)),
        Case("interpolate-2d-input", lambda L, x: F(L).interpolate(x, 4), R(2, 3)),
        Case("interpolate-zero-size", lambda L, x: F(L).interpolate(x, size=0), R(1, 2, 3, 3)),
        Case("interpolate-recompute-with-size", lambda L, x: F(L).interpolate(x, size=2, recompute_scale_factor=True),
             R(1, 2, 3, 3)),
        Case("interpolate-int", lambda L, x: F(L).interpolate(x, 4, mode="bilinear"), I(1, 1, 2, 2), dtypes=(None,)),
        # three spatial dims (issue 8: they raised NotImplementedError)
        Case("interpolate-3d-trilinear", lambda L, x: F(L).interpolate(x, scale_factor=2, mode="trilinear"),
             R(2, 2, 3, 4, 2)),
        Case("interpolate-3d-trilinear-align", lambda L, x: F(L).interpolate(x, size=(3, 5, 2), mode="trilinear",
                                                                            align_corners=True), R(1, 2, 4, 3, 3)),
        Case("interpolate-3d-trilinear-scales", lambda L, x: F(L).interpolate(x, scale_factor=(1.5, 0.5, 2.0),
                                                                             mode="trilinear"), R(1, 2, 4, 4, 3)),
        Case("interpolate-3d-nearest", lambda L, x: F(L).interpolate(x, size=(5, 2, 4)), R(1, 2, 3, 4, 3)),
        Case("interpolate-3d-nearest-exact", lambda L, x: F(L).interpolate(x, size=(3, 5, 7), mode="nearest-exact"),
             R(1, 1, 4, 3, 3)),
        Case("interpolate-3d-area", lambda L, x: F(L).interpolate(x, size=(3, 2, 5), mode="area"), R(2, 2, 4, 5, 6)),
        # (130 -> 200 is avoided: torch's 3-d nearest backward locates sources in float32, its
        # forward in float64, and they disagree on one float64 index there)
        Case("interpolate-3d-long-nearest", lambda L, x: F(L).interpolate(x, size=(300, 2, 2)), R(1, 1, 130, 2, 2)),
        Case("interpolate-3d-int", lambda L, x: F(L).interpolate(x, 4), I(1, 1, 2, 2, 2), dtypes=(None,)),
        Case("interpolate-3d-int-area", lambda L, x: F(L).interpolate(x, 1, mode="area"), I(1, 1, 2, 2, 2),
             dtypes=(None,)),
        Case("interpolate-trilinear-4d", lambda L, x: F(L).interpolate(x, 4, mode="trilinear"), R(1, 2, 3, 3)),
    ]


def block_cases():
    cases = []
    for k, d, p, s in itertools.product((1, (2, 3)), (1, (2, 1)), (0, 1), (1, (2, 1))):
        tag = f"k{k}-d{d}-p{p}-s{s}"
        cases.append(Case(f"unfold-{tag}", lambda L, x, k=k, d=d, p=p, s=s: F(L).unfold(x, k, d, p, s),
                          R(2, 3, 5, 6)))
        kh, kw = (k, k) if isinstance(k, int) else k
        dh, dw = (d, d) if isinstance(d, int) else d
        sh, sw = (s, s) if isinstance(s, int) else s
        blocks = ((5 + 2 * p - dh * (kh - 1) - 1) // sh + 1) * ((6 + 2 * p - dw * (kw - 1) - 1) // sw + 1)
        cases.append(Case(f"fold-{tag}", lambda L, x, k=k, d=d, p=p, s=s: F(L).fold(x, (5, 6), k, d, p, s),
                          R(2, 3 * kh * kw, blocks)))
    return cases + [
        Case("unfold-unbatched", lambda L, x: F(L).unfold(x, 2, stride=2), R(3, 4, 6)),
        Case("unfold-one-block", lambda L, x: F(L).unfold(x, (4, 6)), R(2, 3, 4, 6)),
        Case("fold-unbatched", lambda L, x: F(L).fold(x, 4, 2, stride=2), R(12, 4)),
        Case("fold-round-trip", lambda L, x: F(L).fold(F(L).unfold(x, 3, padding=1), (4, 5), 3, padding=1),
             R(1, 2, 4, 5)),
        Case("unfold-no-block", lambda L, x: F(L).unfold(x, 6), R(1, 1, 5, 5)),
        Case("unfold-kernel-zero", lambda L, x: F(L).unfold(x, 0), R(1, 1, 5, 5)),
        Case("unfold-stride-zero", lambda L, x: F(L).unfold(x, 2, stride=0), R(1, 1, 5, 5)),
        Case("unfold-padding-negative", lambda L, x: F(L).unfold(x, 2, padding=-1), R(1, 1, 5, 5)),
        Case("unfold-kernel-3-ints", lambda L, x: F(L).unfold(x, (2, 2, 2)), R(1, 1, 5, 5)),
        Case("unfold-rank", lambda L, x: F(L).unfold(x, 2), R(1, 1, 1, 5, 5)),
        Case("fold-indivisible", lambda L, x: F(L).fold(x, (3, 3), 2), R(1, 13, 4)),
        Case("fold-block-count", lambda L, x: F(L).fold(x, (3, 3), 2), R(1, 12, 5)),
        Case("fold-rank", lambda L, x: F(L).fold(x, (3, 3), 2), R(1, 1, 12, 4)),
    ]


def shuffle_cases():
    return [
        Case("pixel_shuffle", lambda L, x: F(L).pixel_shuffle(x, 2), R(2, 8, 3, 4)),
        Case("pixel_shuffle-unbatched", lambda L, x: F(L).pixel_shuffle(x, 3), R(9, 2, 1)),
        Case("pixel_shuffle-5d", lambda L, x: F(L).pixel_shuffle(x, 2), R(2, 2, 4, 3, 2)),
        Case("pixel_unshuffle", lambda L, x: F(L).pixel_unshuffle(x, 2), R(2, 2, 4, 6)),
        Case("pixel_unshuffle-unbatched", lambda L, x: F(L).pixel_unshuffle(x, 3), R(1, 3, 6)),
        Case("pixel_shuffle-indivisible", lambda L, x: F(L).pixel_shuffle(x, 2), R(1, 5, 2, 2)),
        Case("pixel_shuffle-rank", lambda L, x: F(L).pixel_shuffle(x, 2), R(4, 2)),
        Case("pixel_shuffle-zero", lambda L, x: F(L).pixel_shuffle(x, 0), R(1, 4, 2, 2)),
        Case("pixel_unshuffle-indivisible", lambda L, x: F(L).pixel_unshuffle(x, 2), R(1, 1, 3, 2)),
        Case("pixel_shuffle-channels-last-3d",
             lambda L, x: F(L).pixel_shuffle(x.contiguous(memory_format=L.channels_last_3d), 2), R(1, 2, 8, 3, 3)),
        Case("pixel_unshuffle-channels-last-3d",
             lambda L, x: F(L).pixel_unshuffle(x.contiguous(memory_format=L.channels_last_3d), 2), R(1, 2, 2, 4, 4)),
        Case("pixel_unshuffle-zero", lambda L, x: F(L).pixel_unshuffle(x, 0), R(1, 1, 4, 4)),
        Case("channel_shuffle", lambda L, x: F(L).channel_shuffle(x, 3), R(2, 6, 3, 2)),
        Case("channel_shuffle-3d", lambda L, x: L.channel_shuffle(x, 2), R(2, 4, 5)),
        Case("channel_shuffle-5d-view", lambda L, x: F(L).channel_shuffle(x.transpose(0, 2), 2), R(3, 2, 4, 2, 2)),
        Case("channel_shuffle-module", lambda L, x: L.nn.ChannelShuffle(4)(x), R(1, 8, 2, 2)),
        Case("channel_shuffle-one-group", lambda L, x: F(L).channel_shuffle(x, 1), R(2, 3, 2)),
        Case("channel_shuffle-empty", lambda L, x: F(L).channel_shuffle(x, 2), R(0, 4, 3)),
        Case("channel_shuffle-indivisible", lambda L, x: F(L).channel_shuffle(x, 2), R(2, 5, 3)),
        Case("channel_shuffle-rank", lambda L, x: F(L).channel_shuffle(x, 2), R(2, 6)),
        Case("channel_shuffle-zero", lambda L, x: F(L).channel_shuffle(x, 0), R(2, 6, 3)),
    ]


@pytest.mark.parametrize("case,dtype", params(pad_cases() + interpolate_cases() + block_cases() + shuffle_cases()))
def test_image_functions(case, dtype):
    check(case, dtype)


@pytest.mark.parametrize("name, call", [
    ("pad-constant", lambda L, x: F(L).pad(x, (1, -1, 2, 0), value=3.0)),
    ("pad-reflect", lambda L, x: F(L).pad(x, (2, 1, 1, 2), mode="reflect")),
    ("interpolate-bilinear", lambda L, x: F(L).interpolate(x, scale_factor=1.5, mode="bilinear")),
    ("interpolate-bicubic-long", lambda L, x: F(L).interpolate(x, size=(5, 3000), mode="bicubic")),
    ("unfold", lambda L, x: F(L).unfold(x, (2, 3), padding=1, stride=(1, 2))),
    ("fold", lambda L, x: F(L).fold(x.reshape(2, 12, 7), (6, 3), 2, stride=(1, 2), padding=(1, 0))),
])
def test_double_backward_through_upstream_gradient(name, call):
    """These maps are linear: the derivative of their gradient w.r.t. the upstream gradient
    is the map again."""
    x = np.sin(np.arange(2 * 3 * 4 * 7)).reshape(2, 3, 4, 7)
    results = []
    for L in (torch, ember):
        xt = L.tensor(x, requires_grad=True)
        y = call(L, xt)
        g = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)), requires_grad=True)
        (gx,) = L.autograd.grad(y, xt, g, create_graph=True)
        (gg,) = L.autograd.grad((gx * L.tensor(np.arange(x.size).reshape(x.shape) / 10.0)).sum(), g)
        results.append((gx, gg))
    for e, t in zip(results[1], results[0]):
        assert_close(e, t, rtol=1e-12, atol=1e-12)


def test_reflect_error_names_the_padding():
    with pytest.raises(RuntimeError, match=r"padding \(4, 0\) at dimension 2 of input \[2, 3, 4\]"):
        ember.nn.functional.pad(ember.randn(2, 3, 4), (4, 0), mode="reflect")


@pytest.mark.parametrize("name, args, kwargs, shape", [
    ("ZeroPad1d", (2,), {}, (2, 3, 4)),
    ("ZeroPad2d", ((1, 2, 0, 3),), {}, (2, 3, 4, 5)),
    ("ZeroPad3d", (1,), {}, (1, 2, 2, 3, 2)),
    ("ConstantPad1d", ((1, 2), 3.5), {}, (3, 4)),
    ("ConstantPad2d", (1, -1.0), {}, (2, 3, 4, 5)),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 2.0), {}, (1, 2, 2, 3, 2)),
    ("ReflectionPad1d", (2,), {}, (2, 3, 4)),
    ("ReflectionPad2d", ((1, 2, 0, 3),), {}, (2, 3, 4, 5)),
    ("ReflectionPad3d", (1,), {}, (1, 2, 2, 3, 2)),
    ("ReplicationPad1d", ((0, 3),), {}, (3, 4)),
    ("ReplicationPad2d", (2,), {}, (3, 4, 5)),
    ("ReplicationPad3d", ((1, 0, 0, 1, 2, 0),), {}, (1, 2, 2, 3, 2)),
    ("CircularPad1d", (2,), {}, (2, 3, 4)),
    ("CircularPad2d", ((1, 2, 0, 3),), {}, (2, 3, 4, 5)),
    ("CircularPad3d", (1,), {}, (1, 2, 2, 3, 2)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 2)),
    ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
    ("Upsample", (), {"scale_factor": 2}, (2, 3, 3, 4)),
    ("Upsample", (), {"size": (5, 7), "mode": "bilinear"}, (2, 3, 3, 4)),
    ("Upsample", (), {"scale_factor": (1.5, 2), "mode": "bicubic", "align_corners": True}, (2, 3, 3, 4)),
    ("Upsample", (), {"size": 7, "mode": "linear"}, (2, 3, 4)),
    ("UpsamplingNearest2d", (), {"size": (5, 6)}, (2, 3, 3, 4)),
    ("UpsamplingBilinear2d", (), {"scale_factor": 2}, (2, 3, 3, 4)),
    ("Unfold", ((2, 3),), {"padding": 1, "stride": (1, 2)}, (2, 3, 4, 5)),
    ("Fold", ((4, 5), 2), {}, (2, 12, 12)),
])
def test_layers_match_torch(name, args, kwargs, shape):
    e_mod, t_mod = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(e_mod) == repr(t_mod)
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye, yt = e_mod(xe), t_mod(xt)
    assert_close(ye, yt, rtol=1e-5, atol=1e-5)
    w = np.cos(np.arange(ye.numel())).reshape(tuple(ye.shape)).astype(np.float32)
    (ye * ember.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    assert_close(xe.grad, xt.grad, rtol=1e-5, atol=1e-5)


def test_circular_pad_layer_rejects_other_ranks():
    for L in (torch, ember):
        with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
            L.nn.CircularPad1d(1)(L.zeros(1, 2, 3, 4))


def test_channel_shuffle_node_repr_and_copy():
    """torch's node name and repr; a new tensor even where the shuffle is the identity."""
    for L in (torch, ember):
        x = L.arange(12.).reshape(1, 4, 3).requires_grad_()
        y = L.nn.ChannelShuffle(4)(x)
        assert type(y.grad_fn).__name__ == "ChannelShuffleBackward0"
        assert repr(L.nn.ChannelShuffle(4)) == "ChannelShuffle(groups=4)"
        with L.no_grad():
            y.add_(1)
        assert x[0, 0, 0].item() == 0
