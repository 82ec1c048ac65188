"""Random streams: after the same manual_seed, ember draws torch 2.13's CPU numbers."""
import itertools

import numpy as np
import pytest

import ember
from ember import _distributions, _random

torch = pytest.importorskip("torch")

SEEDS = [0, 7, 2 ** 40 + 3, -5]


def both(seed, draw):
    """``draw(lib)`` under ``seed`` in ember and in torch, as NumPy arrays."""
    ember.manual_seed(seed)
    torch.manual_seed(seed)
    e, t = draw(ember), draw(torch)
    return (e.numpy(), t.numpy()) if hasattr(e, "numpy") else (e, t)


EXACT = {
    "rand": lambda L: L.rand(5, 3),
    "rand-float64": lambda L: L.rand(7, dtype=L.float64),
    "rand-float16": lambda L: L.rand(9, dtype=L.float16),
    "randn-small": lambda L: L.randn(3),                    # below 16: float64 Box-Muller
    "randn-15": lambda L: L.randn(15),
    "randn-float64-block": lambda L: L.randn(37, dtype=L.float64),
    "cached-normal": lambda L: L.cat([L.randn(1), L.randn(1), L.rand(2), L.randn(3)]),
    "randint": lambda L: L.randint(0, 10, (20,)),
    "randint-negative": lambda L: L.randint(-7, 3, (3, 4)),
    "randint-64-bit": lambda L: L.randint(-3, 2 ** 40, (6,)),
    "randperm": lambda L: L.randperm(50),
    "randperm-1": lambda L: L.randperm(1),
    "normal-scalars": lambda L: L.normal(2.0, 3.0, size=(5,)),
    "normal-tensors": lambda L: L.normal(L.arange(4.0), L.full((4,), 0.5)),
    "bernoulli-float32": lambda L: L.bernoulli(L.full((30,), 0.3)),
    "bernoulli-float64": lambda L: L.bernoulli(L.linspace(0, 1, 30, dtype=L.float64)),
    "bernoulli-scalar-p": lambda L: L.bernoulli(L.zeros(30), 0.25),
    "multinomial": lambda L: L.multinomial(L.tensor([0.1, 0.2, 0.3, 0.4]), 3),
    "multinomial-one": lambda L: L.multinomial(L.tensor([[1.0, 2.0, 0.0], [0.5, 0.0, 0.5]]), 1, replacement=True),
    "multinomial-replacement": lambda L: L.multinomial(L.tensor([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 1.0]]), 9,
                                                       replacement=True),
    "mixed-sequence": lambda L: L.cat([L.rand(3), L.randint(0, 5, (2,)).float(), L.randn(20, dtype=L.float64).float(),
                                       L.randperm(4).float(), L.randn(2)]),
    # In-place fills, hence nn.init and every module's default initialisation.
    "uniform_": lambda L: L.empty(3, 5).uniform_(-2, 3),
    "normal_-float64": lambda L: L.empty(20, dtype=L.float64).normal_(1.0, 2.0),
    "bernoulli_": lambda L: L.empty(30).bernoulli_(0.3),
    "bernoulli_-tensor": lambda L: L.empty(2, 3).bernoulli_(L.tensor([0.2, 0.5, 0.9])),
    "exponential_": lambda L: L.empty(7).exponential_(3.0),
    "random_": lambda L: L.empty(8).random_(-3, 10),
    "init-linear-conv": lambda L: L.cat([L.nn.Linear(5, 3).weight.detach().reshape(-1),
                                         L.nn.Conv2d(2, 3, 3).bias.detach()]),
    "init-sparse": lambda L: L.nn.init.sparse_(L.empty(5, 3), 0.4),
    "init-lstm-embedding": lambda L: L.cat([L.nn.LSTM(4, 3).weight_hh_l0.detach().reshape(-1),
                                            L.nn.Embedding(5, 3).weight.detach().reshape(-1)]),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", list(EXACT))
def test_same_seed_same_numbers_as_torch(name, seed):
    e, t = both(seed, EXACT[name])
    assert e.dtype == t.dtype and e.shape == t.shape
    np.testing.assert_array_equal(e, t)


def box_muller_reference(seed, n):
    """float64 Box-Muller, torch's pairing, of the float32 uniforms randn(n) consumes; and the
    radius of each value (the error of a float32 evaluation scales with it)."""
    ember.manual_seed(seed)
    u = ember.rand(n, dtype=ember.float32).numpy().astype(np.float64)
    tail = ember.rand(16, dtype=ember.float32).numpy().astype(np.float64)

    def blocks(x):
        x = x.reshape(-1, 2, 8)
        radius = np.sqrt(-2 * np.log(1 - x[:, 0]))
        theta = 2 * np.pi * x[:, 1]
        return (np.stack([radius * np.cos(theta), radius * np.sin(theta)], 1).reshape(-1),
                np.stack([radius, radius], 1).reshape(-1))

    values, radii = blocks(u[:n - n % 16])
    if n % 16:
        tail_values, tail_radii = blocks(tail)
        values = np.concatenate([values, np.zeros(n % 16)])
        radii = np.concatenate([radii, np.zeros(n % 16)])
        values[n - 16:], radii[n - 16:] = tail_values, tail_radii
    return values, radii


@pytest.mark.parametrize("shape", [(3, 5), (6, 2, 2)])
def test_orthogonal_init_draws_torchs_sample(shape):
    # The same normal sample, then QR: ember's in float64, torch's in float32.
    e, t = both(2, lambda L: L.nn.init.orthogonal_(L.empty(shape), 2.0))
    np.testing.assert_allclose(e, t, atol=2e-6)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [16, 20, 48, 1001])
def test_randn_blocks_of_16_equal_torchs_up_to_float32_evaluation(n, seed):
    # torch's float32 path (16 and more elements) evaluates log/sin/cos with float32 kernels
    # chosen by the CPU (AVX2's or the C library's), so torch's own values differ by machine.
    # The uniforms and their pairing are torch's; both results are within a few float32 ulp
    # of the radius from the float64 evaluation of the same Box-Muller.
    e, t = both(seed, lambda L: L.randn(n))
    reference, radius = box_muller_reference(seed, n)
    bound = 8 * 2.0 ** -24 * np.maximum(radius, 1.0)
    assert np.all(np.abs(e - reference) <= bound)
    assert np.all(np.abs(t - reference) <= bound)
    e, t = both(seed, lambda L: L.randn(n).sum() + L.rand(1))  # the stream continues in step
    np.testing.assert_allclose(e, t, rtol=1e-5)


def test_explicit_generators_match_torch():
    eg, tg = ember.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    for _ in range(3):
        np.testing.assert_array_equal(ember.rand(4, generator=eg).numpy(), torch.rand(4, generator=tg).numpy())
        np.testing.assert_array_equal(ember.randperm(9, generator=eg).numpy(), torch.randperm(9, generator=tg).numpy())
    assert eg.initial_seed() == tg.initial_seed() == 11


def test_exponential_and_dropout_masks_match_torch():
    e, t = both(5, lambda L: L.empty(6).exponential_(2.0) if L is torch else
                ember.tensor(_distributions.exponential((6,), 2.0, ember.float32)))
    np.testing.assert_array_equal(e, t)
    e, t = both(5, lambda L: L.nn.functional.dropout(L.ones(40), 0.3) if L is torch else
                ember.tensor(_distributions.dropout_mask((40,), 0.3, ember.float32)))
    np.testing.assert_array_equal(e, t)


def test_state_is_torchs_layout_both_ways():
    ember.manual_seed(3)
    torch.manual_seed(3)
    for draw in (lambda L: L.randn(1), lambda L: L.rand(700), lambda L: L.randint(0, 9, (5,))):
        draw(ember), draw(torch)
        np.testing.assert_array_equal(ember.get_rng_state().numpy(), torch.get_rng_state().numpy())
    ember.set_rng_state(ember.tensor(torch.get_rng_state().numpy()))  # a torch state, loaded in ember
    np.testing.assert_array_equal(ember.randn(5).numpy(), torch.randn(5).numpy())
    saved = ember.get_rng_state()
    first = ember.rand(3).numpy()
    ember.set_rng_state(saved)
    np.testing.assert_array_equal(ember.rand(3).numpy(), first)
    with pytest.raises(RuntimeError, match="RNG state size"):
        ember.set_rng_state(ember.zeros(10, dtype=ember.uint8))


@pytest.mark.parametrize("numpy_seeding", [True, False])
def test_a_freshly_seeded_state_is_torchs_with_and_without_numpys_c_seeding(numpy_seeding, monkeypatch):
    """manual_seed fills the twister with NumPy's C ``init_genrand`` where NumPy has it, else
    with the Python recurrence: both give torch's state bytes for every 32-bit seed edge."""
    monkeypatch.setattr(_random, "_C_SEEDING", numpy_seeding)
    generator = ember.Generator()
    for seed in (0, 1, 3, 2**31, 2**32 - 1, 2**32 + 5, -7, 67280421310721):
        generator.manual_seed(seed)
        np.testing.assert_array_equal(generator.get_state().numpy(),
                                      torch.Generator().manual_seed(seed).get_state().numpy())
        generator.random32(3)  # the stream moves on, and a reseed starts it over


def test_random_sampler_draws_torchs_indices_lazily():
    data = range(1000)
    e_sampler = ember.utils.data.RandomSampler(data, replacement=True, num_samples=int(1e10))
    t_sampler = torch.utils.data.RandomSampler(data, replacement=True, num_samples=int(1e10))
    ember.manual_seed(4)
    torch.manual_seed(4)
    e_first = list(itertools.islice(iter(e_sampler), 100))  # must not allocate 1e10 indices
    t_first = list(itertools.islice(iter(t_sampler), 100))
    assert e_first == t_first and len(e_sampler) == int(1e10)


@pytest.mark.parametrize("kwargs", [dict(), dict(num_samples=25), dict(num_samples=7, replacement=True)])
def test_random_sampler_and_shuffled_loader_orders_equal_torchs(kwargs):
    e_gen, t_gen = ember.Generator().manual_seed(9), torch.Generator().manual_seed(9)
    e = list(ember.utils.data.RandomSampler(range(10), generator=e_gen, **kwargs))
    t = list(torch.utils.data.RandomSampler(range(10), generator=t_gen, **kwargs))
    assert e == t
    ember.manual_seed(2)
    torch.manual_seed(2)
    e_batches = [b.tolist() for b in ember.utils.data.DataLoader(ember.arange(10), batch_size=4, shuffle=True)]
    t_batches = [b.tolist() for b in torch.utils.data.DataLoader(torch.arange(10), batch_size=4, shuffle=True)]
    assert e_batches == t_batches
    e_sub = list(ember.utils.data.SubsetRandomSampler([10, 20, 30, 40]))
    t_sub = list(torch.utils.data.SubsetRandomSampler([10, 20, 30, 40]))
    assert e_sub == t_sub


def test_bad_arguments_raise_torchs_errors():
    with pytest.raises(RuntimeError, match="multinomial only supports floating-point dtypes for input, got: Long"):
        ember.multinomial(ember.tensor([1, 2]), 1)
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in \\[0, 1\\], but got p=2"):
        ember.bernoulli(ember.zeros(2), 2.0)


@pytest.mark.parametrize("fill", ["normal_()", "uniform_()", "exponential_()", "bernoulli_(0.3)",
                                  "random_(0, 5)"])
def test_in_place_random_fill_cuts_the_gradient(fill):
    """A filled region's old value no longer reaches the loss: its gradient is zero, as torch's
    (ember let the gradient flow through the overwritten values); a leaf that requires grad
    refuses the fill."""
    grads = []
    for lib in (ember, torch):
        x = lib.tensor([1., 2., 3., 4.], requires_grad=True)
        y = x * 2
        eval("y[1:3]." + fill, {"y": y})
        (y * lib.tensor([1., 2., 3., 4.])).sum().backward()
        grads.append(x.grad.tolist())
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            eval("lib.ones(2, requires_grad=True)." + fill, {"lib": lib})
    assert grads[0] == grads[1] == [2.0, 0.0, 0.0, 8.0]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8", "float16", "bfloat16", "float32",
                                   "float64", "bool"])
def test_random_without_bounds_draws_torchs_numbers_over_the_dtypes_range(dtype):
    """random_() with no bounds covers [0, max] for integers and [0, 2**mantissa] for floats
    (ember drew int64 below 2**24 and filled float16 with inf)."""
    got, want = [], []
    for lib, out in ((ember, got), (torch, want)):
        lib.manual_seed(0)
        out.extend(lib.empty(64, dtype=getattr(lib, dtype)).random_().tolist())
    assert got == want


@pytest.mark.parametrize("draw", [
    lambda L: L.tensor([[0.2, 0.8, 0.0], [0.5, 0.25, 0.25]]).multinomial(5, replacement=True),
    lambda L: L.tensor([1.0, 3.0, 0.5, 2.0]).multinomial(3),
    lambda L: L.tensor([[0.1, 0.9], [0.7, 0.3]]).bernoulli(),
    lambda L: L.empty(2, 3).bernoulli(0.25),
])
def test_tensor_multinomial_and_bernoulli_methods_draw_torchs_numbers(draw):
    e, t = both(3, draw)
    np.testing.assert_array_equal(e, t)
    assert e.dtype == t.dtype


# Issue 8's sweep: each draw of the issue's list for several seeds and sizes, across the size
# of 16 where torch's kernels switch to blocks, in float32 and float64.
SIZES = [1, 5, 15, 16, 17, 33, 100]
SWEEP_EXACT = {
    "rand": lambda L, n, dt: L.rand(n, dtype=dt),
    "uniform_": lambda L, n, dt: L.empty(n, dtype=dt).uniform_(-2, 3),  # float64: one rounding (fma)
    "randint": lambda L, n, dt: L.randint(-3, 10, (n,)),
    "randperm": lambda L, n, dt: L.randperm(n),
    "bernoulli": lambda L, n, dt: L.bernoulli(L.full((n,), 0.3, dtype=dt)),
    "bernoulli_": lambda L, n, dt: L.empty(n, dtype=dt).bernoulli_(0.3),
    "multinomial": lambda L, n, dt: L.multinomial(L.arange(1, 8, dtype=dt), min(n, 7)),
    "multinomial-replacement": lambda L, n, dt: L.multinomial(L.arange(1, 8, dtype=dt), n, replacement=True),
    "dropout": lambda L, n, dt: L.nn.functional.dropout(L.ones(n, 3, dtype=dt), 0.3),
    "alpha_dropout": lambda L, n, dt: L.nn.functional.alpha_dropout(L.ones(n, dtype=dt), 0.3, True),
    "feature_alpha_dropout": lambda L, n, dt: L.nn.functional.feature_alpha_dropout(L.ones(2, n, 2, dtype=dt),
                                                                                   0.4, True),
    "normal-short": lambda L, n, dt: L.normal(2.0, 3.0, size=(n % 16,), dtype=dt),  # one by one
}
SWEEP_NORMAL = {
    "randn": lambda L, n, dt: L.randn(n, dtype=dt),
    "normal": lambda L, n, dt: L.normal(L.ones(n, dtype=dt), L.full((n,), 2.0, dtype=dt)),
    "normal_": lambda L, n, dt: L.empty(n, dtype=dt).normal_(1.0, 3.0),
}


def sweep(draw, seed, n, dtype):
    """ember's and torch's draw, and a draw after it from each (the streams' next numbers)."""
    out = []
    for L in (ember, torch):
        L.manual_seed(seed)
        out.append((draw(L, n, getattr(L, dtype)).numpy(), L.rand(4).numpy()))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(SWEEP_EXACT))
def test_issue_draws_equal_torchs_for_seeds_sizes_and_dtypes(name, dtype):
    for seed, n in itertools.product([0, 1, 1234], SIZES):
        (e, e_next), (t, t_next) = sweep(SWEEP_EXACT[name], seed, n, dtype)
        assert e.dtype == t.dtype and e.shape == t.shape, (seed, n)
        np.testing.assert_array_equal(e, t, err_msg=f"seed {seed}, n {n}")
        np.testing.assert_array_equal(e_next, t_next)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(SWEEP_NORMAL))
def test_issue_normals_equal_torchs_to_the_documented_ulps(name, dtype):
    # docs/random.md: below 16 elements exact; from 16, float32 within a few ulp (torch's
    # float32 log/sin/cos kernels), float64 within 1 ulp (NumPy's SIMD log/sin/cos against the
    # C library's on AVX-512 machines); the stream stays in step either way.
    ulp = {"float32": 2.0 ** -23, "float64": 2.0 ** -52}[dtype]
    for seed, n in itertools.product([0, 1, 1234], SIZES):
        (e, e_next), (t, t_next) = sweep(SWEEP_NORMAL[name], seed, n, dtype)
        assert e.dtype == t.dtype and e.shape == t.shape
        if n < 16:
            np.testing.assert_array_equal(e, t, err_msg=f"seed {seed}, n {n}")
        else:  # values up to ~6 in size: 4 ulp of 8 for float32, 1 ulp of 8 for float64
            bound = (32 if dtype == "float32" else 8) * ulp
            assert np.abs(e - t).max() <= bound, (seed, n, np.abs(e - t).max())
        np.testing.assert_array_equal(e_next, t_next)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_draws_torchs_slopes_and_gradient(dtype):
    # One 53-bit uniform per element <= 0 (nan and positives draw none), bounds in the dtype.
    x = np.concatenate([np.linspace(-2, 2, 41), [np.nan, 0.0, -0.0, -1.0]])
    seen = []
    for L in (ember, torch):
        L.manual_seed(4)
        t = L.tensor(x, dtype=getattr(L, dtype), requires_grad=True)
        y = L.nn.functional.rrelu(t, training=True)
        y.sum().backward()
        seen.append((y.detach().numpy(), t.grad.numpy(), L.rand(3).numpy()))
    for e, t in zip(*seen):
        np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("bounds", [(-2.0, 2.0, 0.0, 1.0), (0.5, 3.0, 0.0, 1.0), (-0.1, 0.1, 0.0, 0.02),
                                    (1.0, 2.0, 0.0, 0.1)])
def test_trunc_normal_and_gumbel_softmax_draw_torchs_numbers(bounds):
    # trunc_normal_ is torch 2.13's rejection sampler (normal redraws when more than 0.3 of the
    # mass is inside [a, b], uniform proposals otherwise); gumbel noise is -log(exponential_).
    a, b, mean, std = bounds
    for n in (5, 100):
        (e, e_next), (t, t_next) = sweep(lambda L, n, dt: L.nn.init.trunc_normal_(L.empty(n), mean, std, a, b),
                                         3, n, "float32")
        np.testing.assert_allclose(e, t, rtol=0, atol=32 * 2.0 ** -23 * max(abs(a), abs(b)))
        assert (e >= a).all() and (e <= b).all()
        np.testing.assert_array_equal(e_next, t_next)
    (e, e_next), (t, t_next) = sweep(lambda L, n, dt: L.nn.functional.gumbel_softmax(L.zeros(n, 3)), 3, 20, "float32")
    np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(e_next, t_next)


LAYOUTS = {  # (shape made, how it is viewed): dropout and rand_like draw in the input's memory order
    "transposed": lambda L: L.ones(5, 6).t(),
    "batch_first attention output": lambda L: L.ones(7, 3, 4).transpose(0, 1),  # nn.MultiheadAttention's
    "channels_last": lambda L: L.ones(2, 3, 4, 5).to(memory_format=L.channels_last),
    "sliced transposed": lambda L: L.ones(5, 12).t()[::2],
    "expanded (torch's empty_like is row-major)": lambda L: L.ones(6, 1).expand(6, 5),
    "permuted with size-1 dims": lambda L: L.ones(1, 4, 1, 3).permute(3, 2, 0, 1),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_dropout_rand_like_and_randn_like_of_a_strided_tensor_draw_torchs_numbers(layout):
    # a batch_first TransformerEncoderLayer trained with other losses than torch's: its
    # dropout masks were drawn in row-major order, torch's into empty_like(input)'s memory
    made, expanded = LAYOUTS[layout], layout.startswith("expanded")
    draws = [lambda L: L.nn.functional.dropout(made(L), 0.4), lambda L: L.rand_like(made(L)),
             lambda L: L.rand_like(made(L), dtype=L.float64)]
    if not expanded:  # (writing into an expanded tensor is refused; randn's blocks of 16 differ by an ulp)
        draws += [lambda L: L.nn.functional.dropout(made(L), 0.4, inplace=True),
                  # torch's serial kernel for a non-contiguous tensor: one Box-Muller draw at a time
                  lambda L: L.cat([L.randn_like(made(L)).flatten(), L.randn(3)]),
                  lambda L: L.randn_like(made(L), dtype=L.float64, requires_grad=True).detach()]
    for draw in draws:
        e, t = both(3, draw)
        np.testing.assert_array_equal(e, t)
        assert (e != e.ravel()[0]).any()
    ember.manual_seed(3)
    x = made(ember)
    assert ember.rand_like(x).stride() == torch.rand_like(made(torch)).stride() or 1 in x.shape
    leaf = ember.rand_like(x, requires_grad=True)
    assert leaf.is_leaf and leaf.requires_grad
