"""Dynamic image sizes are probed at small sizes (compiler/probe_sizes.py): a large first call
(an image of 96 x 104) is fitted from probes at 16 or more (the first size the function takes),
not next to it and at 2 * 104 + 8 (tens of seconds for a 600 x 600 convolution); where the small
sizes record another program (a branch on the size) the probes run next to the real size."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._dynamo import mark_dynamic
from ember._dynamo.utils import counters
from ember.compiler import dynamic
from ember.compiler.probe_sizes import small_bases

pytestmark = pytest.mark.usefixtures("fresh_compiler")


@pytest.fixture
def probed(monkeypatch):
    """The points ({symbol: size}) the probes recorded at, in order."""
    points, record = [], dynamic._record
    monkeypatch.setattr(dynamic, "_record", lambda *a: points.append(dict(a[5])) or record(*a))
    return points


def _run(fn, compiled, shapes, seed):
    rng = np.random.default_rng(seed)
    for shape in shapes:
        data = rng.standard_normal(shape).astype(np.float32)
        x = ember.tensor(data)
        mark_dynamic(x, 2)
        mark_dynamic(x, 3)
        np.testing.assert_allclose(compiled(x).numpy(), fn(ember.tensor(data)).numpy(), rtol=1e-4, atol=1e-4,
                                   err_msg=f"{shape}")


def test_small_bases_are_powers_of_two_up_to_half_the_size():
    assert small_bases({"s0": 600, "s1": 30}, {}) == [{"s0": 16, "s1": 30}, {"s0": 32, "s1": 30},
                                                      {"s0": 64, "s1": 30}, {"s0": 128, "s1": 30},
                                                      {"s0": 256, "s1": 30}]
    # each symbol up to half its size, raised to its range's minimum
    assert small_bases({"s0": 70, "s1": 100}, {"s1": (40, None)}) == [{"s0": 16, "s1": 40}, {"s0": 32, "s1": 40}]
    assert small_bases({"s0": 32, "s1": 9}, {}) == []  # small sizes: probed next to themselves


def test_a_large_image_is_probed_at_small_sizes(probed, monkeypatch, capfd):
    monkeypatch.setenv("EMBER_LOGS", "dynamic")
    ember.manual_seed(0)
    conv = ember.nn.Conv2d(2, 4, 3, padding=1)

    def f(x):
        return F.avg_pool2d(F.max_pool2d(conv(x).relu(), 2), 3, stride=2)
    with ember.no_grad():
        _run(f, ember.compile(f), [(1, 2, 96, 104), (1, 2, 88, 72), (1, 2, 150, 201)], 0)
    assert max(v for p in probed for v in p.values()) <= 2 * 16 + 8, probed
    assert counters["stats"]["unique_graphs"] == 1
    err = capfd.readouterr().err
    # ranges the user left open stay open, as torch's
    assert "s0 = x.size(2) in [2, inf], s1 = x.size(3) in [2, inf]" in err and "specialising" not in err, err


def test_a_function_that_refuses_small_sizes_is_probed_from_the_first_it_takes(probed):
    ember.manual_seed(1)
    conv = ember.nn.Conv2d(1, 2, 20)  # needs 20 x 20 or more: 16 raises, 32 is the base

    def f(x):
        return conv(x).square().mean((2, 3))
    with ember.no_grad():
        _run(f, ember.compile(f), [(1, 1, 70, 80), (1, 1, 66, 90)], 1)
    assert probed[0] == {"s0": 16, "s1": 16} and probed[1] == {"s0": 32, "s1": 32}, probed
    assert max(v for p in probed for v in p.values()) <= 2 * 32 + 8, probed
    assert counters["stats"]["unique_graphs"] == 1


def test_a_branch_on_the_size_probes_next_to_the_call(probed, monkeypatch, capfd):
    monkeypatch.setenv("EMBER_LOGS", "dynamic")

    def f(x):
        return x * 2 if x.shape[2] > 50 else x - 1  # the small probes record another program
    _run(f, ember.compile(f), [(1, 1, 64, 64), (1, 1, 65, 65), (1, 1, 40, 40)], 2)
    # (H and W marked dynamic are two symbols, equal here, as torch's mark_dynamic)
    assert probed[0] == {"s0": 16, "s1": 16} and {"s0": 65, "s1": 64} in probed, probed
    err = capfd.readouterr().err
    assert "the probes from s0=16, s1=16 do not fit the call at s0=64, s1=64: probing next to it" in err
