"""LowRankMultivariateNormal, Wishart, LKJCholesky, the matrix transforms and the constraint
registries (biject_to, transform_to) against torch.distributions 2.13 in float64: log_prob on
torch's samples, entropy, moments, gradients, sample shapes and the support of ember's own
samples, validation errors (sampling streams are not compared)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
TD, ED = torch.distributions, ember.distributions


def E(t):
    return ember.tensor(t.detach().numpy())


def close(e, t, rtol=1e-10, atol=1e-10):
    np.testing.assert_allclose(np.asarray(e.detach().numpy(), dtype=np.float64), t.detach().numpy(),
                               rtol=rtol, atol=atol)


def _positive_definite(g, *shape):
    A = torch.randn(*shape, generator=g, dtype=torch.float64)
    return A @ A.mT + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)


def test_low_rank_multivariate_normal_equals_torch():
    g = torch.Generator().manual_seed(0)
    loc = torch.randn(2, 1, 4, generator=g, dtype=torch.float64)
    W = torch.randn(3, 4, 2, generator=g, dtype=torch.float64)
    D = torch.rand(4, generator=g, dtype=torch.float64) + 0.5
    t = TD.LowRankMultivariateNormal(loc, W, D)
    params = [E(loc).requires_grad_(), E(W).requires_grad_(), E(D).requires_grad_()]
    e = ED.LowRankMultivariateNormal(*params)
    assert (e.batch_shape, e.event_shape) == (ember.Size([2, 3]), ember.Size([4]))
    x = t.sample((5,))
    close(e.log_prob(E(x)), t.log_prob(x))
    close(e.entropy(), t.entropy())
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        close(getattr(e, name), getattr(t, name))
    # gradients of log_prob + entropy in all three parameters
    tp = [p.requires_grad_() for p in (loc.clone(), W.clone(), D.clone())]
    tt = TD.LowRankMultivariateNormal(*tp)
    (tt.log_prob(x).sum() + tt.entropy().sum()).backward()
    (e.log_prob(E(x)).sum() + e.entropy().sum()).backward()
    for a, b in zip(params, tp):
        close(a.grad, b.grad, rtol=1e-9)
    s = e.rsample((7,))
    assert tuple(s.shape) == (7, 2, 3, 4) and s.requires_grad
    assert tuple(e.expand((4, 2, 3)).sample().shape) == (4, 2, 3, 4)
    # the sample covariance of many draws (one batch) is W W^T + D within 5 standard errors
    one = ED.LowRankMultivariateNormal(E(loc[0, 0]), E(W[0]), E(D))
    draws = one.sample((20000,)).numpy()
    cov = t.covariance_matrix[0, 0].numpy()
    se = np.sqrt((cov ** 2 + np.outer(np.diag(cov), np.diag(cov))) / 20000)
    assert np.all(np.abs(np.cov(draws.T) - cov) < 5 * se + 1e-3)


def test_low_rank_multivariate_normal_errors_as_torchs():
    calls = [lambda L: (L.tensor(0.0), L.ones(3, 1), L.ones(3)),
             lambda L: (L.zeros(3), L.ones(3), L.ones(3)),
             lambda L: (L.zeros(3), L.ones(4, 1), L.ones(3)),
             lambda L: (L.zeros(3), L.ones(3, 1), L.ones(4)),
             lambda L: (L.zeros(2, 3), L.ones(5, 3, 1), L.ones(3))]
    for call in calls:
        messages = []
        for L, D in ((ember, ED), (torch, TD)):
            with pytest.raises(ValueError) as error:
                D.LowRankMultivariateNormal(*call(L))
            messages.append(str(error.value).replace("ember.", "torch."))
        assert messages[0] == messages[1]
    with pytest.raises(ValueError):
        ED.LowRankMultivariateNormal(ember.zeros(3), ember.ones(3, 1), -ember.ones(3), validate_args=True)


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_equals_torch(param):
    g = torch.Generator().manual_seed(1)
    V = _positive_definite(g, 2, 3, 3)
    matrix = {"covariance_matrix": V, "precision_matrix": torch.linalg.inv(V),
              "scale_tril": torch.linalg.cholesky(V)}[param]
    df = torch.tensor([[4.5], [3.0]], dtype=torch.float64)
    t = TD.Wishart(df, **{param: matrix})
    e_df, e_matrix = E(df).requires_grad_(), E(matrix).requires_grad_()
    e = ED.Wishart(e_df, **{param: e_matrix})
    assert (e.batch_shape, e.event_shape) == (ember.Size([2, 2]), ember.Size([3, 3]))
    x = t.sample((4,))
    close(e.log_prob(E(x)), t.log_prob(x), rtol=1e-9)
    close(e.entropy(), t.entropy(), rtol=1e-9)
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        close(getattr(e, name), getattr(t, name), rtol=1e-9)
    t_df, t_matrix = df.clone().requires_grad_(), matrix.clone().requires_grad_()
    tt = TD.Wishart(t_df, **{param: t_matrix})
    (tt.log_prob(x).sum() + tt.entropy().sum()).backward()
    (e.log_prob(E(x)).sum() + e.entropy().sum()).backward()
    close(e_df.grad, t_df.grad, rtol=1e-8)
    # (of scale_tril only the lower triangle: torch's cholesky_solve also sends gradient to the
    # upper triangle, which the factor never reads)
    keep = torch.ones(3, 3).tril() if param == "scale_tril" else torch.ones(3, 3)
    close(e_matrix.grad * E(keep), t_matrix.grad * keep, rtol=1e-8, atol=1e-9)
    s = e.rsample((5,))
    assert tuple(s.shape) == (5, 2, 2, 3, 3)
    assert bool(ED.constraints.positive_definite.check(s.detach()).all())
    assert ED.Wishart(7.0, covariance_matrix=E(V[0])).sample().shape == (3, 3)


def _wishart_kl(n1, V1, n2, V2):
    """KL(W(n1, V1) || W(n2, V2)) in closed form (float64 NumPy/SciPy)."""
    from scipy.special import digamma, multigammaln
    p = V1.shape[-1]
    return (n2 / 2 * (np.linalg.slogdet(V2)[1] - np.linalg.slogdet(V1)[1])
            + n1 / 2 * (np.trace(np.linalg.solve(V2, V1)) - p) + multigammaln(n2 / 2, p) - multigammaln(n1 / 2, p)
            + (n1 - n2) / 2 * sum(digamma(n1 / 2 - i / 2) for i in range(p)))


def test_wishart_is_an_exponential_family_with_torchs_natural_parameters_and_kl():
    g = torch.Generator().manual_seed(2)
    V, W = _positive_definite(g, 2, 3, 3), _positive_definite(g, 2, 3, 3)
    df_p, df_q = torch.tensor([4.5, 6.0], dtype=torch.float64), torch.tensor([5.0, 3.5], dtype=torch.float64)
    tp = TD.Wishart(df_p, covariance_matrix=V)
    e_df_q, e_W = E(df_q).requires_grad_(), E(W).requires_grad_()
    ep, eq = ED.Wishart(E(df_p), covariance_matrix=E(V)), ED.Wishart(e_df_q, precision_matrix=e_W)
    assert isinstance(ep, ED.ExponentialFamily)
    for mine, theirs in zip(ep._natural_params, tp._natural_params):
        close(mine, theirs)
    close(ep._log_normalizer(*ep._natural_params), tp._log_normalizer(*tp._natural_params))
    # the KL is the closed form, batch element by batch element (torch 2.13 agrees one element
    # at a time; on a batch its Bregman sum adds the df term over the batch)
    kl = ED.kl_divergence(ep, eq)
    want = [_wishart_kl(df_p[b].item(), V[b].numpy(), df_q[b].item(), torch.linalg.inv(W[b]).numpy()) for b in range(2)]
    np.testing.assert_allclose(kl.detach().numpy(), want, rtol=1e-10)
    for b in range(2):
        close(ED.kl_divergence(ED.Wishart(E(df_p[b]), covariance_matrix=E(V[b])),
                               ED.Wishart(E(df_q[b]), precision_matrix=E(W[b]))),
              TD.kl_divergence(TD.Wishart(df_p[b], covariance_matrix=V[b]), TD.Wishart(df_q[b], precision_matrix=W[b])))
    # gradients reach q's parameters (p's natural parameters are detached, as torch's)
    t_df_q, t_W = df_q[0].clone().requires_grad_(), W[0].clone().requires_grad_()
    TD.kl_divergence(TD.Wishart(df_p[0], covariance_matrix=V[0]), TD.Wishart(t_df_q, precision_matrix=t_W)).backward()
    ED.kl_divergence(ED.Wishart(E(df_p[0]), covariance_matrix=E(V[0])),
                     ED.Wishart(e_df_q[0], precision_matrix=e_W[0])).backward()
    close(e_df_q.grad[0], t_df_q.grad, rtol=1e-8)
    close(e_W.grad[0], t_W.grad, rtol=1e-8, atol=1e-10)


def test_wishart_sample_mean_is_df_times_v():
    V = ember.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=ember.float64)
    draws = ED.Wishart(ember.tensor(5.0, dtype=ember.float64), covariance_matrix=V).sample((20000,))
    mean, var = draws.mean(0).numpy(), ED.Wishart(5.0, covariance_matrix=V).variance.numpy()
    assert np.all(np.abs(mean - 5 * V.numpy()) < 5 * np.sqrt(var / 20000))


def test_wishart_errors_as_torchs():
    V = [[2.0, 0.0], [0.0, 1.0]]
    calls = [lambda L: ((3.0,), {}), lambda L: ((3.0,), {"covariance_matrix": L.tensor(V), "scale_tril": L.tensor(V)}),
             lambda L: ((3.0,), {"covariance_matrix": L.ones(2)}),
             lambda L: ((0.5,), {"covariance_matrix": L.tensor(V)})]
    for call in calls:
        messages = []
        for L, D in ((ember, ED), (torch, TD)):
            args, kwargs = call(L)
            with pytest.raises((ValueError, AssertionError)) as error:
                D.Wishart(*args, **kwargs)
            messages.append((type(error.value), str(error.value)))
        assert messages[0] == messages[1]


def test_lkj_cholesky_equals_torch():
    concentration = torch.tensor([0.5, 1.0, 3.0], dtype=torch.float64)
    t = TD.LKJCholesky(4, concentration)
    c = E(concentration).requires_grad_()
    e = ED.LKJCholesky(4, c)
    assert (e.batch_shape, e.event_shape) == (ember.Size([3]), ember.Size([4, 4]))
    x = t.sample((5,))
    close(e.log_prob(E(x)), t.log_prob(x))
    tc = concentration.clone().requires_grad_()
    TD.LKJCholesky(4, tc).log_prob(x).sum().backward()
    e.log_prob(E(x)).sum().backward()
    close(c.grad, tc.grad)
    s = e.sample((6,))
    assert tuple(s.shape) == (6, 3, 4, 4)
    assert bool(ED.constraints.corr_cholesky.check(s).all())
    assert tuple(e.expand((2, 3)).sample().shape) == (2, 3, 4, 4)
    close(ED.LKJCholesky(3, 2.0).log_prob(ember.eye(3, dtype=ember.float64)),
          TD.LKJCholesky(3, 2.0).log_prob(torch.eye(3, dtype=torch.float64)))
    for L, D in ((ember, ED), (torch, TD)):
        with pytest.raises(ValueError, match="Expected dim to be an integer greater than or equal to 2. Found dim=1."):
            D.LKJCholesky(1)


def test_lkj_cholesky_marginal_correlations_follow_the_lkj_law():
    """Each off-diagonal correlation of LKJ(eta) in dim d is Beta(b, b) on (-1, 1) with
    b = eta - 1 + d / 2 (LKJ 2009, section 3.2), variance 1 / (2 b + 1): 1/4 for eta = 1,
    d = 3, 1/6 for eta = 2 (torch 2.13's sampler gives 0.30 for C[2, 0] and C[2, 1] at eta = 1).
    Bound: 5 standard errors of a variance of 20,000 draws (sd of r^2 below 0.25)."""
    for eta, variance in ((1.0, 1 / 4), (2.0, 1 / 6)):
        L = ED.LKJCholesky(3, eta).sample((20000,))
        C = (L @ L.mT).numpy()
        for i, j in ((1, 0), (2, 0), (2, 1)):
            r = C[:, i, j]
            assert abs(r.mean()) < 5 * np.sqrt(variance / 20000)
            assert abs((r * r).mean() - variance) < 5 * 0.25 / np.sqrt(20000)


CONSTRAINTS = [lambda C: C.real, lambda C: C.real_vector, lambda C: C.positive, lambda C: C.nonnegative,
               lambda C: C.greater_than(2.0), lambda C: C.greater_than_eq(-1.0), lambda C: C.less_than(3.0),
               lambda C: C.unit_interval, lambda C: C.interval(-1.0, 2.0), lambda C: C.half_open_interval(0.0, 1.0),
               lambda C: C.simplex, lambda C: C.lower_cholesky, lambda C: C.positive_definite,
               lambda C: C.positive_semidefinite, lambda C: C.corr_cholesky, lambda C: C.independent(C.positive, 2),
               lambda C: C.boolean, lambda C: C.lower_triangular, lambda C: C.positive_integer]


@pytest.mark.parametrize("which", range(len(CONSTRAINTS)))
def test_constraint_registries_equal_torchs(which):
    g = torch.Generator().manual_seed(which)
    for registry in ("biject_to", "transform_to"):
        c_t, c_e = CONSTRAINTS[which](TD.constraints), CONSTRAINTS[which](ED.constraints)
        try:
            t = getattr(TD, registry)(c_t)
        except NotImplementedError as error:
            with pytest.raises(NotImplementedError, match=str(error)):
                getattr(ED, registry)(c_e)
            continue
        e = getattr(ED, registry)(c_e)
        assert type(e).__name__ == type(t).__name__
        x = torch.randn(*t.inverse_shape((2, 3, 3)) if c_t.event_dim == 2 else (2, 6), generator=g,
                        dtype=torch.float64)
        if type(t).__name__ == "CorrCholeskyTransform":
            x = torch.randn(2, 6, generator=g, dtype=torch.float64)
        y_t, y_e = t(x), e(E(x))
        close(y_e, y_t)
        assert bool(c_e.check(y_e).all())
        if t.bijective:
            close(e.inv(y_e), x, rtol=1e-8, atol=1e-8)
            close(e.log_abs_det_jacobian(E(x), y_e), t.log_abs_det_jacobian(x, y_t))


def test_corr_cholesky_transform_shapes_and_errors_as_torchs():
    e, t = ED.CorrCholeskyTransform(), TD.CorrCholeskyTransform()
    assert e.forward_shape((2, 6)) == t.forward_shape((2, 6)) == (2, 4, 4)
    assert e.inverse_shape((2, 4, 4)) == t.inverse_shape((2, 4, 4)) == (2, 6)
    for call in (lambda T: T.forward_shape((5,)), lambda T: T.inverse_shape((3, 4))):
        messages = []
        for T in (e, t):
            with pytest.raises(ValueError) as error:
                call(T)
            messages.append(str(error.value))
        assert messages[0] == messages[1]


def test_registry_register_as_decorator_and_by_class():
    registry = ED.constraint_registry.ConstraintRegistry()

    @registry.register(ED.constraints.positive)
    def _softplus(constraint):
        return ED.SoftplusTransform()

    assert isinstance(registry(ED.constraints.greater_than(3.0)), ED.SoftplusTransform)
    x = ember.randn(5, dtype=ember.float64)
    t, tt = ED.SoftplusTransform(), TD.SoftplusTransform()
    close(t.inv(t(x)), torch.tensor(x.numpy()), rtol=1e-12)
    close(t.log_abs_det_jacobian(x, t(x)), tt.log_abs_det_jacobian(torch.tensor(x.numpy()), tt(torch.tensor(x.numpy()))))
    with pytest.raises(TypeError):
        registry.register(3, _softplus)


def _joined(L, D):
    C = D.constraints
    return {
        "cat": (C.cat([C.positive, C.real, C.interval(-1.0, 2.0)], dim=1, lengths=[2, 1, 3]), (4, 6)),
        "cat-last": (C.cat([C.positive, C.unit_interval], dim=-1, lengths=[1, 2]), (2, 3)),
        "stack": (C.stack([C.positive, C.real, C.greater_than(3.0)], dim=-1), (5, 3)),
        "stack-first": (C.stack([C.unit_interval, C.less_than(0.0)], dim=0), (2, 4)),
        "cat-of-vectors": (C.cat([C.real_vector, C.independent(C.positive, 1)], dim=0, lengths=[2, 3]), (5, 4)),
    }


@pytest.mark.parametrize("name", ["cat", "cat-last", "stack", "stack-first", "cat-of-vectors"])
def test_cat_and_stack_transforms_equal_torchs(name):
    (c_t, shape), (c_e, _) = _joined(torch, TD)[name], _joined(ember, ED)[name]
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    for registry in ("biject_to", "transform_to"):
        t, e = getattr(TD, registry)(c_t), getattr(ED, registry)(c_e)
        assert type(e).__name__ == type(t).__name__ and e.bijective == t.bijective
        assert e.event_dim == t.event_dim
        y_t, y_e = t(x), e(E(x))
        close(y_e, y_t)
        np.testing.assert_array_equal(c_e.check(y_e).numpy(), c_t.check(y_t).numpy())
        if t.bijective:
            close(e.inv(y_e), x, rtol=1e-9, atol=1e-9)
            close(e.log_abs_det_jacobian(E(x), y_e), t.log_abs_det_jacobian(x, y_t))
    assert (c_e.event_dim, c_e.is_discrete) == (c_t.event_dim, c_t.is_discrete)


def test_cat_and_stack_errors():
    # torch 2.13 checks these with assert statements: AssertionError
    for L, D in ((ember, ED), (torch, TD)):
        with pytest.raises(AssertionError):
            D.CatTransform([D.ExpTransform(), 3])
        with pytest.raises(AssertionError):
            D.StackTransform([1])
        with pytest.raises(AssertionError):
            D.CatTransform([D.ExpTransform()], lengths=[3])(L.zeros(2))
        with pytest.raises(AssertionError):
            D.StackTransform([D.ExpTransform()], dim=2)(L.zeros(1, 2))
    with pytest.raises(AssertionError, match="expected size 3 along dim 0"):
        ED.CatTransform([ED.ExpTransform()], lengths=[3])(ember.zeros(2))


def test_kl_divergences_of_low_rank_normals_equal_torchs():
    g = torch.Generator().manual_seed(5)
    loc = torch.randn(2, 3, generator=g, dtype=torch.float64)
    W, D = torch.randn(2, 3, 2, generator=g, dtype=torch.float64), torch.rand(3, generator=g, dtype=torch.float64) + 0.3
    S = _positive_definite(g, 2, 3, 3)
    t_low, t_full = TD.LowRankMultivariateNormal(loc, W, D), TD.MultivariateNormal(loc.flip(0), S)
    e_low = ED.LowRankMultivariateNormal(E(loc), E(W), E(D))
    e_full = ED.MultivariateNormal(E(loc.flip(0)), E(S))
    e_other = ED.LowRankMultivariateNormal(E(loc) + 1, E(W) * 0.5, E(D) + 1)
    t_other = TD.LowRankMultivariateNormal(loc + 1, W * 0.5, D + 1)
    for (a, b), (c, d) in (((e_low, e_other), (t_low, t_other)), ((e_low, e_full), (t_low, t_full)),
                           ((e_full, e_low), (t_full, t_low))):
        close(ED.kl_divergence(a, b), TD.kl_divergence(c, d), rtol=1e-9)
    for L, D_ in ((ember, ED), (torch, TD)):
        with pytest.raises(ValueError, match=r"two Low Rank Multivariate Normals with\s+different event shapes"):
            D_.kl_divergence(D_.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(2)),
                             D_.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(3)))


def test_kl_of_low_rank_normals_of_other_ranks_and_batches_and_its_gradients_equal_torchs():
    # (ember's Woodbury form never makes an n x n matrix)
    g = torch.Generator().manual_seed(7)
    tensors = [torch.randn(2, 6, generator=g, dtype=torch.float64), torch.randn(2, 6, 3, generator=g, dtype=torch.float64),
               torch.rand(6, generator=g, dtype=torch.float64) + 0.2, torch.randn(6, generator=g, dtype=torch.float64),
               torch.randn(6, 1, generator=g, dtype=torch.float64), torch.rand(2, 6, generator=g, dtype=torch.float64) + 0.5]
    ours = [E(t).requires_grad_() for t in tensors]
    theirs = [t.clone().requires_grad_() for t in tensors]
    e = ED.kl_divergence(ED.LowRankMultivariateNormal(*ours[:3]), ED.LowRankMultivariateNormal(*ours[3:]))
    t = TD.kl_divergence(TD.LowRankMultivariateNormal(*theirs[:3]), TD.LowRankMultivariateNormal(*theirs[3:]))
    assert tuple(e.shape) == (2,)
    close(e, t, rtol=1e-10)
    e.sum().backward()
    t.sum().backward()
    for a, b in zip(ours, theirs):
        close(a.grad, b.grad, rtol=1e-8, atol=1e-10)


def test_reshape_and_cumulative_distribution_transforms_equal_torchs():
    x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    e, t = ED.transforms.ReshapeTransform((3, 4), (2, 6)), TD.transforms.ReshapeTransform((3, 4), (2, 6))
    close(e(E(x)), t(x))
    close(e.inv(e(E(x))), x)
    close(e.log_abs_det_jacobian(E(x), e(E(x))), t.log_abs_det_jacobian(x, t(x)))
    assert e.forward_shape((5, 3, 4)) == t.forward_shape((5, 3, 4)) and e.inverse_shape((2, 6)) == (3, 4)
    assert (e.domain.event_dim, e.codomain.event_dim) == (t.domain.event_dim, t.codomain.event_dim)
    for call in (lambda D: D.transforms.ReshapeTransform((3,), (2,)), lambda D: D.transforms.ReshapeTransform(
            (3, 4), (12,)).forward_shape((4, 3)), lambda D: D.transforms.ReshapeTransform((3, 4), (12,)).forward_shape((4,))):
        messages = []
        for D in (ED, TD):
            with pytest.raises(ValueError) as error:
                call(D)
            messages.append(str(error.value).replace("torch.Size", "ember.Size"))
        assert messages[0] == messages[1]
    loc = torch.tensor([0.5, -1.0], dtype=torch.float64)
    e = ED.transforms.CumulativeDistributionTransform(ED.Normal(E(loc), 2.0))
    t = TD.transforms.CumulativeDistributionTransform(TD.Normal(loc, 2.0))
    y_e, y_t = e(E(x[..., :2])), t(x[..., :2])
    close(y_e, y_t)
    close(e.inv(y_e), x[..., :2], rtol=1e-9)
    close(e.log_abs_det_jacobian(E(x[..., :2]), y_e), t.log_abs_det_jacobian(x[..., :2], y_t))
    assert e.bijective and e.sign == 1 and bool(e.codomain.check(y_e).all())
