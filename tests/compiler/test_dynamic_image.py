"""Dynamic image sizes: a convolution's or pooling's output size is a floor of the input's,
``(H + 2p - d(k-1) - 1) // s + 1``, which :func:`ember.compiler.size_fits.fit` recovers from the
sizes the probes record (checked here against torch's own output sizes over a range), and a CNN's
step over images of several sizes compiles one graph, equal to eager ember and to torch."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember._dynamo import mark_dynamic
from ember._dynamo.utils import counters
from ember.compiler.size_fits import fit
from ember.compiler.symbolic import Underdetermined, evaluate, symbol

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _probed(values_at, base=29):
    """The fit over the sizes dynamic.py probes (the base, the next two, 2 * base + 8), and the
    next sizes up while more than one floor fits, as its ``_deciding`` adds them."""
    sizes = [base, base + 1, base + 2, 2 * base + 8]
    for extra in range(base + 3, base + 13):
        try:
            return fit([values_at(n) for n in sizes], [{"s0": n} for n in sizes]), sizes
        except Underdetermined:
            sizes.append(extra)
    raise AssertionError(f"no fit over {sizes}")


def _torch_size(n, op, **kw):
    return op(torch.zeros(1, 1, n, n), **kw).shape[-1]


CASES = [  # (op, kwargs): torch's output sizes are the closed forms
    (torch.nn.functional.max_pool2d, dict(kernel_size=2)),
    (torch.nn.functional.max_pool2d, dict(kernel_size=3, stride=2, padding=1)),
    (torch.nn.functional.max_pool2d, dict(kernel_size=3, stride=2, ceil_mode=True)),
    (torch.nn.functional.max_pool2d, dict(kernel_size=2, stride=3, padding=1, ceil_mode=True)),
    (torch.nn.functional.max_pool2d, dict(kernel_size=3, stride=3, dilation=2)),
    (torch.nn.functional.avg_pool2d, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (torch.nn.functional.conv2d, dict(weight=torch.zeros(1, 1, 5, 5), stride=2, padding=2)),
    (torch.nn.functional.conv2d, dict(weight=torch.zeros(1, 1, 3, 3), stride=3, dilation=2)),
    (torch.nn.functional.conv2d, dict(weight=torch.zeros(1, 1, 3, 3), stride=2, padding=1, dilation=3)),
]


@pytest.mark.parametrize("op, kw", CASES, ids=[f"{op.__name__}-{sorted(kw)}" for op, kw in CASES])
def test_fit_recovers_conv_and_pool_output_sizes(op, kw):
    expr, sizes = _probed(lambda n: _torch_size(n, op, **kw))
    assert len(sizes) <= 6, sizes  # at most two sizes more than the probes had
    for n in range(12, 200):
        assert evaluate(expr, {"s0": n}) == _torch_size(n, op, **kw), (expr, n)


def test_fit_recovers_nested_floors_and_their_products():
    # LeNet-like: conv 5 (pad 2), pool 2, conv 5, pool 2: (H // 2 - 4) // 2 = H // 4 - 2, which
    # three consecutive sizes leave open (one of its four phases missing): the fourth decides
    after = lambda n: (n // 2 - 4) // 2  # noqa: E731
    expr, sizes = _probed(after)
    assert str(expr) == "s0 // 4 - 2" and len(sizes) == 5
    points = [{"s0": n} for n in sizes]
    with pytest.raises(Underdetermined):
        fit([after(n) for n in sizes[:4]], points[:4])
    # a flattened map (16 channels): a product of floors fitted before, never of anything else
    atoms = [fit([n // 2 for n in sizes], points), expr]
    flat = fit([16 * after(n) ** 2 for n in sizes], points, atoms)
    assert all(evaluate(flat, {"s0": n}) == 16 * after(n) ** 2 for n in range(8, 300))
    assert fit([after(n) ** 2 + 1 for n in sizes], points, atoms) is None
    # two image sizes: each a floor of its own symbol, the area their product
    grid = [{"h": h, "w": w} for h, w in [(29, 29), (30, 29), (31, 29), (32, 29), (66, 29), (29, 30), (29, 31),
                                          (29, 32), (29, 66), (30, 30)]]
    floors = [fit([p[n] // 4 - 2 for p in grid], grid) for n in "hw"]
    assert [str(f) for f in floors] == ["h // 4 - 2", "w // 4 - 2"]
    area = fit([(p["h"] // 4 - 2) * (p["w"] // 4 - 2) * 6 for p in grid], grid, floors)
    assert all(evaluate(area, {"h": h, "w": w}) == (h // 4 - 2) * (w // 4 - 2) * 6 for h in range(8, 60) for w in (9, 40))


def test_fit_recovers_what_a_stride_leaves_over():
    # a strided convolution's input gradient pads by (H + 2p - d(k-1) - 1) % s: a symbol among
    # several (the batch and W seen not to matter), the next sizes of H added while more than
    # one remainder fits the points, as dynamic.py's probes do
    for stride, pad in ((2, 1), (3, 0), (3, 2)):
        def left(p):
            return (p["h"] + 2 * pad - 3) % stride
        points = [{"n": n, "h": h, "w": w} for n, h, w in [(2, 17, 22), (3, 17, 22), (12, 17, 22), (2, 18, 22),
                                                          (2, 19, 22), (2, 42, 22), (2, 17, 23), (2, 17, 52)]]
        for h in range(20, 30):
            try:
                expr = fit([left(p) for p in points], points)
                break
            except Underdetermined:
                points.append({"n": 2, "h": h, "w": 22})
        assert len(points) <= 14, points
        assert all(evaluate(expr, {"n": 2, "h": h, "w": 9}) == left({"h": h}) for h in range(3, 90)), expr
    with pytest.raises(Underdetermined):  # (h + 1) % 4 and (3h + 3) % 4 agree at 17, 19 and 41 (all odd)
        fit([(h + 1) % 4 for h in (17, 19, 41)], [{"h": h} for h in (17, 19, 41)])


def test_fit_never_guesses_a_floor():
    sizes = [29, 30, 31, 66, 2]
    points = [{"s0": n} for n in sizes]
    assert fit([min(n, 8) for n in sizes], points) is None  # saturates: the far sizes tell
    assert fit([n * n for n in sizes], points) is None
    assert fit([min(n, 4) for n in (3, 4, 5)], [{"s0": n} for n in (3, 4, 5)]) is None  # spans less than two periods
    with pytest.raises(Underdetermined):  # (s0 + 1) // 4 and s0 // 4 agree at all of 29, 30, 66
        fit([(n + 1) // 4 for n in (29, 30, 66)], [{"s0": n} for n in (29, 30, 66)])
    s0 = symbol("s0")
    assert str(fit([(3 * n + 2) // 5 for n in sizes], points)) == str((3 * s0 + 2) // 5)


def _lenet(lib):
    n = lib.nn
    return n.Sequential(n.Conv2d(1, 6, 5, padding=2), n.ReLU(), n.MaxPool2d(2), n.Conv2d(6, 16, 5), n.ReLU(),
                        n.AvgPool2d(2, ceil_mode=True), n.Conv2d(16, 10, 1))


def _step(lib, net, functional):
    optimizer = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        optimizer.zero_grad()
        loss = functional.cross_entropy(net(x).mean((2, 3)), y)
        loss.backward()
        optimizer.step()
        return loss
    return step


def test_lenet_step_over_image_sizes_compiles_once(plans, monkeypatch, capfd):
    # One graph (one C build) for every image size: H = W = s0, the pooled sizes floors of it
    # (s0 // 2; ceil_mode's (s0 // 2 - 3) // 2 + 1), the mean's count their product. Loss, gradients and parameters after each step equal eager ember's
    # and torch's. Convolutions (im2col + BLAS, both gradients), pooling and the mean's
    # division by a symbolic count all run in C.
    monkeypatch.setenv("EMBER_LOGS", "dynamic")
    ember.manual_seed(3)
    model, reference, oracle = _lenet(ember), _lenet(ember), _lenet(torch)
    reference.load_state_dict(model.state_dict())
    oracle.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()})
    compiled = ember.compile(_step(ember, model, F))
    eager, torch_step = _step(ember, reference, F), _step(torch, oracle, torch.nn.functional)
    rng = np.random.default_rng(3)
    for size in (28, 29, 32, 35):
        data, labels = rng.standard_normal((3, 1, size, size)).astype(np.float32), rng.integers(0, 10, 3)
        x, y = ember.tensor(data), ember.tensor(labels)
        mark_dynamic(x, 2)
        mark_dynamic(x, 3)
        got, want, truth = compiled(x, y), eager(x, y), torch_step(torch.from_numpy(data), torch.from_numpy(labels))
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5, err_msg=f"{size}")
        np.testing.assert_allclose(got.item(), truth.item(), rtol=1e-4, err_msg=f"{size}")
        for p, q, t in zip(model.parameters(), reference.parameters(), oracle.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=f"{size}")
            np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-3, atol=1e-5, err_msg=f"{size}")
            np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-3, atol=1e-5, err_msg=f"{size}")
    assert counters["stats"]["unique_graphs"] == 1 and len(plans) == 1
    assert sum(counters["recompiles"].values()) == 0
    err = capfd.readouterr().err
    # compiled at the second call (29), for every size from 2 up, as torch's
    assert "dynamic graph of _step.<locals>.step: s0 = x.size(2) in [2, inf]" in err and "specialising" not in err, err
    assert plans.numpy_nodes() == []


def test_convolution_and_pooling_over_symbolic_image_sizes_run_in_c(plans):
    # H and W two symbols: a strided, padded convolution (im2col + BLAS: its column ranges and
    # buffers sized at run time; both gradients), max pooling (padding, stride 2: argmax,
    # maximum, gradient) and average pooling (ceil_mode, padding left out of the count; its
    # gradient). One graph in C for five (H, W) pairs, equal to eager (pooling to the bit).
    ember.manual_seed(5)
    conv = ember.nn.Conv2d(3, 8, 3, stride=2, padding=1)

    def f(x):
        y = F.max_pool2d(conv(x), 3, stride=2, padding=1)
        return F.avg_pool2d(y, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False).square().sum()
    compiled = ember.compile(f, dynamic=True)
    rng = np.random.default_rng(5)
    for h, w in [(17, 22), (18, 23), (25, 17), (30, 30), (21, 19)]:
        data = rng.standard_normal((2, 3, h, w)).astype(np.float32)
        got = []
        for fn in (compiled, f):
            x = ember.tensor(data, requires_grad=True)
            conv.zero_grad()
            value = fn(x)
            value.backward()
            got.append((value.item(), x.grad.numpy(), conv.weight.grad.numpy().copy()))
        np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-5, err_msg=f"{h, w}")
        for a, e in zip(got[0][1:], got[1][1:]):
            np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5, err_msg=f"{h, w}")
    assert counters["stats"]["unique_graphs"] == 1 and len(plans) == 2  # forward, backward
    assert plans.numpy_nodes() == []


def test_arithmetic_with_a_size_expression_runs_in_c(plans):
    # x * H / (W // 2): numbers that follow the symbolic sizes, cast to x's dtype in the fused
    # loop (eager's float32 arithmetic with the ints: bit-equal)
    def f(x):
        return x * x.shape[2] / (x.shape[3] // 2) + x.mean((2, 3), keepdim=True)
    compiled = ember.compile(f, dynamic=True)
    rng = np.random.default_rng(2)
    for h, w in [(5, 7), (6, 9), (9, 4), (12, 13)]:
        x = ember.tensor(rng.standard_normal((2, 3, h, w)).astype(np.float32))
        np.testing.assert_array_equal(compiled(x).numpy(), f(x).numpy(), err_msg=f"{h, w}")
    assert counters["stats"]["unique_graphs"] == 1 and plans.numpy_nodes() == []


_OUT_OF_MEMORY = '''
import resource
import ember
conv = ember.nn.Conv2d(48, 4, 3, padding=1)
f = ember.compile(lambda x: conv(x), dynamic=True)
with ember.no_grad():
    for h in (60, 60):  # one graph in C for sizes 2..128 (probed at 2, 60, 61, 62 and 128)
        f(ember.zeros(1, 48, h, h))
    x = ember.zeros(1, 48, 128, 128)
    with open("/proc/self/statm") as fh:
        used = int(fh.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + (8 << 20), resource.RLIM_INFINITY))
    try:  # im2col's columns grow from 432 * 60 * 60 floats to 432 * 128 * 128 (28 MB)
        f(x)
    except MemoryError as e:
        print("MemoryError:", e)
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm")
def test_a_convolution_buffer_malloc_cannot_get_raises_memory_error(tmp_path):
    # the scratch buffers of im2col over symbolic sizes grow with malloc at run time; where it
    # fails the kernel returns and the call raises MemoryError (unchecked: a segmentation fault).
    # One malloc arena: glibc retries a failed allocation in another thread's arena, whose
    # reserved 64 MB the limit counts already (the threads that ran the compilers made some)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path), MALLOC_ARENA_MAX="1")
    run = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY], capture_output=True, text=True, env=env, timeout=240)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "MemoryError: conv: no memory for the kernel's buffers" in run.stdout, run.stdout + run.stderr[-2000:]
