"""``func.stack_module_state`` (the model-ensembling tutorial: stacked parameters, ``vmap``
over ``functional_call``), ``func.jvp`` and ``func.linearize`` against torch 2.13."""
import copy

import numpy as np
import pytest
import torch

import ember


def ensemble(lib):
    """The tutorial's flow at a small size: M models of one class, their stacked state, the
    predictions of every model on its own minibatch and on one shared minibatch, and an Adam
    step on the stacked parameters."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.norm, self.fc2 = nn.Linear(12, 8), nn.BatchNorm1d(8), nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(F.relu(self.norm(self.fc1(x.flatten(1)))))

    models = [SimpleMLP().eval() for _ in range(3)]
    data = lib.randn(3, 5, 3, 4)
    params, buffers = lib.func.stack_module_state(models)
    base_model = copy.deepcopy(models[0])

    def fmodel(params, buffers, x):
        return lib.func.functional_call(base_model, (params, buffers), (x,))

    own = lib.func.vmap(fmodel)(params, buffers, data)
    shared = lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data[0])
    loop = lib.stack([model(minibatch) for model, minibatch in zip(models, data)])
    optimizer = lib.optim.Adam(params.values(), lr=0.1)
    own.square().mean().backward()
    optimizer.step()
    return ([p.size(0) for p in params.values()], list(params), list(buffers), [own, shared, loop],
            [p.detach() for p in params.values()], [p.requires_grad for p in params.values()])


def test_stacked_models_predict_and_train_as_under_torch():
    t, e = ensemble(torch), ensemble(ember)
    assert e[:3] == t[:3] and e[5] == t[5] == [True] * 6
    assert e[1] == ["fc1.weight", "fc1.bias", "norm.weight", "norm.bias", "fc2.weight", "fc2.bias"]
    assert e[2] == ["norm.running_mean", "norm.running_var", "norm.num_batches_tracked"]
    for a, b in zip(e[3] + e[4], t[3] + t[4]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(e[3][0].detach().numpy(), e[3][2].detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("models, message", [
    (lambda L: [], "Expected at least one model, got 0."),
    (lambda L: [L.nn.Linear(2, 2), L.nn.Linear(2, 2).eval()], "same training/eval mode"),
    (lambda L: [L.nn.Linear(2, 2), L.nn.Bilinear(2, 2, 2)], "same class"),
    (lambda L: [L.nn.Linear(2, 2), L.nn.Linear(2, 2).requires_grad_(False)], "weight from each model to have the same"),
])
def test_stack_module_state_refuses_as_torch(models, message):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=message):
            lib.func.stack_module_state(models(lib))


FUNCTIONS = [
    (lambda L, x: x.sin() * x, (np.linspace(-1, 2, 5),)),
    (lambda L, x, y: (x @ y).tanh(), (np.arange(6.0).reshape(2, 3) / 5, np.linspace(-1, 1, 12).reshape(3, 4))),
    (lambda L, x, y: {"a": x.exp().sum(), "b": (x * y, y)}, (np.linspace(0, 1, 4), np.linspace(1, 2, 4))),
    (lambda L, p: L.nn.functional.softmax(p["w"] * p["v"][0], -1), ({"w": np.linspace(-1, 1, 3), "v": [np.ones(3)]},)),
]


def leaves_of(tree):
    if isinstance(tree, dict):
        return [x for k in tree for x in leaves_of(tree[k])]
    if isinstance(tree, (tuple, list)):
        return [x for v in tree for x in leaves_of(v)]
    return [tree]


def tree_map(f, tree):
    if isinstance(tree, dict):
        return {k: tree_map(f, v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(tree_map(f, v) for v in tree)
    return f(tree)


@pytest.mark.parametrize("case", range(len(FUNCTIONS)))
def test_jvp_and_linearize_equal_torchs(case):
    func, primals = FUNCTIONS[case]
    rng = np.random.default_rng(case)
    tangents = tree_map(lambda p: rng.standard_normal(np.shape(p)), primals)
    out = {}
    for lib in (torch, ember):
        p, t = tree_map(lib.tensor, primals), tree_map(lib.tensor, tangents)
        value, product = lib.func.jvp(lambda *a: func(lib, *a), p, t)
        value2, jvp_fn = lib.func.linearize(lambda *a: func(lib, *a), *p)
        out[lib] = [x.numpy() for x in leaves_of(value) + leaves_of(product) + leaves_of(value2)
                    + leaves_of(jvp_fn(*t))]
    assert len(out[ember]) == len(out[torch])
    for e, t in zip(out[ember], out[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-14)


def test_jvp_has_aux_and_errors_as_torch():
    for lib in (torch, ember):
        x = lib.tensor([0.5, -1.0], dtype=lib.float64)
        value, product, aux = lib.func.jvp(lambda x: (x ** 3, x.sum()), (x,), (lib.ones(2, dtype=lib.float64),),
                                           has_aux=True)
        assert product.tolist() == [0.75, 3.0] and float(aux) == -0.5 and not product.requires_grad
        with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
            lib.func.jvp(lib.sin, x, (x,))
        with pytest.raises(RuntimeError, match="same python structure"):
            lib.func.jvp(lambda a, b: a * b, (x, x), (x,))
        with pytest.raises(RuntimeError, match="should be a tuple: \\(output, aux\\)"):
            lib.func.jvp(lib.sin, (x,), (x,), has_aux=True)
