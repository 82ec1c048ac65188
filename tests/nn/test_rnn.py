"""RNN, LSTM, GRU and their cells compared with torch: weights copied from torch, then
outputs, final states and the gradients of the input, the initial states and every weight."""
import warnings

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close

INPUT, HIDDEN, LENGTH, BATCH = 3, 4, 5, 3
LENGTHS = [5, 2, 4]  # unsorted on purpose; sorted packing uses them in decreasing order

KINDS = {
    "rnn_tanh": ("RNN", {}),
    "rnn_relu": ("RNN", {"nonlinearity": "relu"}),
    "lstm": ("LSTM", {}),
    "lstm_proj": ("LSTM", {"proj_size": 2}),
    "gru": ("GRU", {}),
}


TOL = {np.float32: dict(rtol=2e-4, atol=2e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def make_pair(kind, dtype=np.float64, **kwargs):
    """A torch module and an ember one holding the same weights (copied through numpy)."""
    cls, extra = KINDS[kind]
    torch.manual_seed(0)
    t_mod = getattr(torch.nn, cls)(INPUT, HIDDEN, **extra, **kwargs).to(getattr(torch, np.dtype(dtype).name))
    e_mod = getattr(ember.nn, cls)(INPUT, HIDDEN, **extra, **kwargs, dtype=getattr(ember, np.dtype(dtype).name))
    e_mod.load_state_dict({k: ember.tensor(v.numpy().copy()) for k, v in t_mod.state_dict().items()})
    return e_mod, t_mod


def both(array, grad=True):
    return ember.tensor(array.copy(), requires_grad=grad), torch.tensor(array.copy(), requires_grad=grad)


def flat_states(state):
    return list(state) if isinstance(state, tuple) else [state]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("form", ["padded", "packed_sorted", "packed_unsorted", "unbatched"])
@pytest.mark.parametrize("with_h0", [False, True], ids=["zeros", "h0"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("kind", list(KINDS))
def test_matches_torch(kind, num_layers, bidirectional, batch_first, with_h0, form, dtype):
    e_mod, t_mod = make_pair(kind, dtype, num_layers=num_layers, bidirectional=bidirectional,
                             batch_first=batch_first)
    directions = 2 if bidirectional else 1
    out_size = 2 if kind == "lstm_proj" else HIDDEN
    batch = 1 if form == "unbatched" else BATCH
    shape = (batch, LENGTH, INPUT) if batch_first else (LENGTH, batch, INPUT)
    ex, tx = both(rand(*shape, dtype=dtype))
    e_in, t_in = ex, tx
    if form == "unbatched":
        e_in, t_in = ex.squeeze(0 if batch_first else 1), tx.squeeze(0 if batch_first else 1)
    elif form.startswith("packed"):
        lengths = LENGTHS if form == "packed_unsorted" else sorted(LENGTHS, reverse=True)
        sorted_ = form == "packed_sorted"
        e_in = ember.nn.utils.rnn.pack_padded_sequence(ex, lengths, batch_first, enforce_sorted=sorted_)
        t_in = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted=sorted_)

    states = []
    if with_h0:
        state_shapes = [(num_layers * directions, batch, out_size)]
        if kind.startswith("lstm"):
            state_shapes.append((num_layers * directions, batch, HIDDEN))
        if form == "unbatched":
            state_shapes = [(s[0], s[2]) for s in state_shapes]
        states = [both(rand(*s, seed=3 + i, dtype=dtype)) for i, s in enumerate(state_shapes)]
    e_args, t_args = [e_in], [t_in]
    if states:
        e_h, t_h = [s[0] for s in states], [s[1] for s in states]
        e_args.append(tuple(e_h) if kind.startswith("lstm") else e_h[0])
        t_args.append(tuple(t_h) if kind.startswith("lstm") else t_h[0])

    e_out, e_state = e_mod(*e_args)
    t_out, t_state = t_mod(*t_args)
    tol = TOL[dtype]
    if form.startswith("packed"):
        assert isinstance(e_out, ember.nn.utils.rnn.PackedSequence)
        assert e_out.batch_sizes.tolist() == t_out.batch_sizes.tolist()
        e_out, t_out = e_out.data, t_out.data
    assert_close(e_out, t_out, **tol)
    e_states, t_states = flat_states(e_state), flat_states(t_state)
    for e_s, t_s in zip(e_states, t_states, strict=True):
        assert_close(e_s, t_s, **tol)

    # Upstream gradients that differ per element, on the output and on every final state.
    loss_e, loss_t = 0, 0
    for i, (e_t, t_t) in enumerate(zip([e_out] + e_states, [t_out] + t_states)):
        w = rand(*t_t.shape, seed=10 + i, dtype=dtype)
        loss_e = loss_e + (e_t * ember.tensor(w)).sum()
        loss_t = loss_t + (t_t * torch.tensor(w)).sum()
    loss_e.backward()
    loss_t.backward()
    assert_close(ex.grad, tx.grad, **tol)
    for e_s, t_s in states:
        assert_close(e_s.grad, t_s.grad, **tol)
    t_params = dict(t_mod.named_parameters())
    for name, p in e_mod.named_parameters():
        assert_close(p.grad, t_params[name].grad, **tol)


@pytest.mark.parametrize("kind", list(KINDS))
def test_no_bias_and_state_dict_keys(kind):
    e_mod, t_mod = make_pair(kind, bias=False, num_layers=2, bidirectional=True)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert e_mod._flat_weights_names == t_mod._flat_weights_names
    assert e_mod._all_weights == t_mod._all_weights
    ex, tx = both(rand(LENGTH, BATCH, INPUT))
    (e_out, _), (t_out, _) = e_mod(ex), t_mod(tx)
    assert_close(e_out, t_out, rtol=1e-9, atol=1e-11)
    e_out.sum().backward()
    t_out.sum().backward()
    assert_close(ex.grad, tx.grad, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("kind", list(KINDS))
def test_parameters_shapes_repr_and_init(kind):
    cls, extra = KINDS[kind]
    kwargs = dict(num_layers=2, bidirectional=True, batch_first=True, dropout=0.25)
    e_mod = getattr(ember.nn, cls)(6, 8, **extra, **kwargs)
    t_mod = getattr(torch.nn, cls)(6, 8, **extra, **kwargs)
    assert repr(e_mod) == repr(t_mod)
    e_shapes = [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()]
    assert e_shapes == [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
    assert [[tuple(w.shape) for w in ws] for ws in e_mod.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in t_mod.all_weights]
    bound = 1 / np.sqrt(8)
    values = np.concatenate([p.detach().numpy().ravel() for p in e_mod.parameters()])
    assert np.all(np.abs(values) <= bound) and values.std() > bound / 3
    assert e_mod.flatten_parameters() is None


def test_reprs_of_other_settings():
    for args, kwargs in [((3, 4), {}), ((3, 4, 1), {"bias": False}), ((3, 4), {"nonlinearity": "relu"})]:
        assert repr(ember.nn.RNN(*args, **kwargs)) == repr(torch.nn.RNN(*args, **kwargs))
    assert repr(ember.nn.LSTM(3, 4, proj_size=2)) == repr(torch.nn.LSTM(3, 4, proj_size=2))
    for cls in ["RNNCell", "LSTMCell", "GRUCell"]:
        assert repr(getattr(ember.nn, cls)(3, 4)) == repr(getattr(torch.nn, cls)(3, 4))
        assert repr(getattr(ember.nn, cls)(3, 4, bias=False)) == repr(getattr(torch.nn, cls)(3, 4, bias=False))
    assert repr(ember.nn.RNNCell(3, 4, nonlinearity="relu")) == repr(torch.nn.RNNCell(3, 4, nonlinearity="relu"))


CELLS = {"rnn_tanh": ("RNNCell", {}), "rnn_relu": ("RNNCell", {"nonlinearity": "relu"}),
         "lstm": ("LSTMCell", {}), "gru": ("GRUCell", {})}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("with_hx", [False, True], ids=["zeros", "hx"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("kind", list(CELLS))
def test_cells_match_torch(kind, bias, with_hx, batched, dtype):
    cls, extra = CELLS[kind]
    torch.manual_seed(0)
    t_cell = getattr(torch.nn, cls)(INPUT, HIDDEN, bias=bias, **extra).to(getattr(torch, np.dtype(dtype).name))
    e_cell = getattr(ember.nn, cls)(INPUT, HIDDEN, bias=bias, **extra, dtype=getattr(ember, np.dtype(dtype).name))
    assert list(e_cell.state_dict()) == list(t_cell.state_dict())
    e_cell.load_state_dict({k: ember.tensor(v.numpy().copy()) for k, v in t_cell.state_dict().items()})
    lead = (BATCH,) if batched else ()
    ex, tx = both(rand(*lead, INPUT, dtype=dtype))
    e_args, t_args, states = [ex], [tx], []
    if with_hx:
        states = [both(rand(*lead, HIDDEN, seed=5 + i, dtype=dtype)) for i in range(2 if kind == "lstm" else 1)]
        e_args.append(tuple(s[0] for s in states) if kind == "lstm" else states[0][0])
        t_args.append(tuple(s[1] for s in states) if kind == "lstm" else states[0][1])
    e_res, t_res = flat_states(e_cell(*e_args)), flat_states(t_cell(*t_args))
    tol = TOL[dtype]
    loss_e, loss_t = 0, 0
    for i, (e_r, t_r) in enumerate(zip(e_res, t_res, strict=True)):
        assert_close(e_r, t_r, **tol)
        w = rand(*t_r.shape, seed=20 + i, dtype=dtype)
        loss_e = loss_e + (e_r * ember.tensor(w)).sum()
        loss_t = loss_t + (t_r * torch.tensor(w)).sum()
    loss_e.backward()
    loss_t.backward()
    assert_close(ex.grad, tx.grad, **tol)
    for e_s, t_s in states:
        assert_close(e_s.grad, t_s.grad, **tol)
    t_params = dict(t_cell.named_parameters())
    for name, p in e_cell.named_parameters():
        assert_close(p.grad, t_params[name].grad, **tol)


def test_cell_over_a_sequence_equals_layer():
    """An LSTMCell stepped by hand gives the LSTM layer's output (shared weights)."""
    layer = ember.nn.LSTM(INPUT, HIDDEN)
    cell = ember.nn.LSTMCell(INPUT, HIDDEN)
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = ember.tensor(rand(LENGTH, BATCH, INPUT, dtype=np.float32))
    out, (h_n, c_n) = layer(x)
    h = c = ember.zeros(BATCH, HIDDEN)
    for t in range(LENGTH):
        h, c = cell(x[t], (h, c))
        assert_close(h, torch.tensor(out[t].detach().numpy()), rtol=1e-5, atol=1e-6)
    assert_close(c, torch.tensor(c_n[0].detach().numpy()), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("packed", [False, True], ids=["padded", "packed"])
@pytest.mark.parametrize("kind", ["rnn_tanh", "lstm", "lstm_proj", "gru"])
def test_gradient_of_gradient_matches_torch(kind, packed):
    e_mod, t_mod = make_pair(kind, num_layers=2, bidirectional=True)
    ex, tx = both(rand(LENGTH, BATCH, INPUT))
    results = []
    for lib, mod, x in ((ember, e_mod, ex), (torch, t_mod, tx)):
        inp = lib.nn.utils.rnn.pack_padded_sequence(x, LENGTHS, enforce_sorted=False) if packed else x
        out, state = mod(inp)
        out = out.data if packed else out
        h = flat_states(state)[0]
        loss = (out ** 2).sum() + (h ** 3).sum()
        (gx,) = lib.autograd.grad(loss, [x], create_graph=True)
        (gx ** 2).sum().backward()
        results.append([x.grad] + [p.grad for p in mod.parameters()])
    for e_g, t_g in zip(*results, strict=True):
        assert_close(e_g, t_g, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("kind", ["rnn_tanh", "rnn_relu", "lstm", "lstm_proj", "gru"])
def test_second_derivatives_match_finite_differences(kind):
    """gradgradcheck (float64 central differences of the first derivative) through a
    bidirectional fused layer on a packed batch of unequal lengths; the input, the initial
    state and every weight and bias are differentiated twice."""
    options = {"rnn_tanh": ("RNN", {}), "rnn_relu": ("RNN", {"nonlinearity": "relu"}),
               "lstm": ("LSTM", {}), "lstm_proj": ("LSTM", {"proj_size": 1}), "gru": ("GRU", {})}
    cls, extra = options[kind]
    ember.manual_seed(0)
    module = getattr(ember.nn, cls)(2, 2, bidirectional=True, dtype=ember.float64, **extra)
    x = ember.tensor(rand(3, 2, 2), requires_grad=True)
    out_size = extra.get("proj_size", 2)
    state = [ember.tensor(rand(2, 2, out_size, seed=1), requires_grad=True)]
    if cls == "LSTM":
        state.append(ember.tensor(rand(2, 2, 2, seed=2), requires_grad=True))

    def run(x, *tensors):  # (the parameters are the module's own: gradcheck perturbs them in place)
        h = tensors[:len(state)]
        out, _ = module(ember.nn.utils.rnn.pack_padded_sequence(x, [3, 2]), h if cls == "LSTM" else h[0])
        return out.data
    assert ember.autograd.gradgradcheck(run, (x, *state, *module.parameters()), atol=1e-6, rtol=1e-4)


def test_third_derivative_is_refused():
    rnn = ember.nn.GRU(INPUT, HIDDEN).double()
    x = ember.tensor(rand(LENGTH, 2, INPUT), requires_grad=True)
    out, _ = rnn(x)
    (gx,) = ember.autograd.grad((out ** 2).sum(), [x], create_graph=True)
    with pytest.raises(RuntimeError, match="differentiated twice"):
        ember.autograd.grad((gx ** 2).sum(), [x], create_graph=True)


def test_dropout_between_layers():
    e_mod, t_mod = make_pair("lstm", num_layers=2, dropout=0.5)
    ex, tx = both(rand(LENGTH, BATCH, INPUT), grad=False)
    e_mod.eval()
    t_mod.eval()
    assert_close(e_mod(ex)[0], t_mod(tx)[0], rtol=1e-9, atol=1e-11)
    e_mod.train()
    ember.manual_seed(1)
    first = e_mod(ex)[0]
    assert not np.allclose(first.detach().numpy(), t_mod(tx)[0].detach().numpy())
    # With p = 1 the second layer sees only zeros, whatever the input.
    e_mod.dropout = 1.0
    other = ember.tensor(rand(LENGTH, BATCH, INPUT, seed=9))
    np.testing.assert_allclose(e_mod(ex)[0].detach().numpy(), e_mod(other)[0].detach().numpy())


def test_dropout_warning_for_one_layer():
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.GRU(3, 4, dropout=0.2)
        assert [str(w.message) for w in caught] == [
            "dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
            "expects num_layers greater than 1, but got dropout=0.2 and num_layers=1"]


def test_module_dtype_conversion_and_weight_assignment():
    lstm = ember.nn.LSTM(INPUT, HIDDEN).double()
    out, _ = lstm(ember.tensor(rand(LENGTH, 2, INPUT)))
    assert out.dtype == ember.float64
    lstm.weight_hh_l0 = ember.nn.Parameter(ember.zeros(4 * HIDDEN, HIDDEN, dtype=ember.float64))
    assert lstm._flat_weights[1] is lstm.weight_hh_l0


def _errors(make, call):
    """Calls ``call(make(lib), lib)`` for torch and ember; both must raise the same class and
    message (ember's dtype names read ``ember.`` where torch's read ``torch.``)."""
    found = []
    for lib in (torch, ember):
        torch.manual_seed(0)
        with pytest.raises(Exception) as info:
            call(make(lib), lib)
        found.append((type(info.value), str(info.value).replace("ember.", "torch.")))
    assert found[0] == found[1]


CONSTRUCTION_ERRORS = [
    lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=-1),
    lambda lib: lib.nn.GRU(3, 4, proj_size=2),
    lambda lib: lib.nn.RNN(3, 4, proj_size=2),
    lambda lib: lib.nn.LSTM(3, 4, dropout=1.5),
    lambda lib: lib.nn.LSTM(3, 4, dropout=True),
    lambda lib: lib.nn.LSTM(3, 4, num_layers=0),
    lambda lib: lib.nn.LSTM(3, 0),
    lambda lib: lib.nn.LSTM(0, 4),
    lambda lib: lib.nn.LSTM(3.0, 4),
    lambda lib: lib.nn.LSTM(3, 4, bias=1),
    lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"),
]


@pytest.mark.parametrize("make", CONSTRUCTION_ERRORS)
def test_construction_errors(make):
    _errors(make, lambda m, lib: m)


def _x(lib, *shape, dtype="float32"):
    return lib.tensor(rand(*shape, dtype=np.dtype(dtype)))


CALL_ERRORS = [
    ("LSTM", lambda m, lib: m(_x(lib, 5, 3, 7))),
    ("RNN", lambda m, lib: m(_x(lib, 5, 3, 7))),
    ("GRU", lambda m, lib: m(_x(lib, 5, 3, 10), _x(lib, 1, 3, 20))),
    ("RNN", lambda m, lib: m(_x(lib, 5, 3, 10), _x(lib, 1, 3, 20))),
    ("LSTM", lambda m, lib: m(_x(lib, 5, 3, 10), (_x(lib, 1, 3, 20), _x(lib, 2, 3, 20)))),
    ("LSTM", lambda m, lib: m(_x(lib, 5, 3, 10), (_x(lib, 2, 3, 20), _x(lib, 2, 3, 21)))),
    ("LSTM", lambda m, lib: m(_x(lib, 5, 3, 10), (_x(lib, 3, 20), _x(lib, 3, 20)))),
    ("LSTM", lambda m, lib: m(_x(lib, 3, 10), (_x(lib, 2, 1, 20), _x(lib, 2, 1, 20)))),
    ("GRU", lambda m, lib: m(_x(lib, 5, 3, 10), _x(lib, 3, 20))),
    ("GRU", lambda m, lib: m(_x(lib, 3, 10), _x(lib, 2, 1, 20))),
    ("LSTM", lambda m, lib: m(_x(lib, 4, 5, 3, 10))),
    ("GRU", lambda m, lib: m(_x(lib, 4, 5, 3, 10))),
    ("RNN", lambda m, lib: m(_x(lib, 4, 5, 3, 10))),
    ("GRU", lambda m, lib: m(_x(lib, 5, 3, 10, dtype="float64"))),
    ("GRU", lambda m, lib: m(_x(lib, 0, 3, 10))),
    ("GRU", lambda m, lib: m(lib.nn.utils.rnn.pack_sequence([_x(lib, 3, 7)]))),
]


@pytest.mark.parametrize("cls, call", CALL_ERRORS)
def test_call_errors(cls, call):
    _errors(lambda lib: getattr(lib.nn, cls)(10, 20, 2), call)


def test_named_error_messages():
    lstm = ember.nn.LSTM(10, 20)
    with pytest.raises(RuntimeError, match=r"^input.size\(-1\) must be equal to input_size. Expected 10, got 7$"):
        lstm(ember.randn(5, 3, 7))
    gru = ember.nn.GRU(10, 20, 2)
    with pytest.raises(RuntimeError, match=r"^Expected hidden size \(2, 3, 20\), got \[1, 3, 20\]$"):
        gru(ember.randn(5, 3, 10), ember.randn(1, 3, 20))


CELL_ERRORS = [
    ("LSTMCell", lambda m, lib: m(_x(lib, 3, 7))),
    ("LSTMCell", lambda m, lib: m(_x(lib, 3, 10), (_x(lib, 3, 19), _x(lib, 3, 20)))),
    ("LSTMCell", lambda m, lib: m(_x(lib, 3, 10), (_x(lib, 3, 20), _x(lib, 3, 19)))),
    ("LSTMCell", lambda m, lib: m(_x(lib, 3, 10), (_x(lib, 2, 20), _x(lib, 3, 20)))),
    ("LSTMCell", lambda m, lib: m(_x(lib, 3, 10), (_x(lib, 2, 3, 20), _x(lib, 3, 20)))),
    ("GRUCell", lambda m, lib: m(_x(lib, 3, 10), _x(lib, 3, 21))),
    ("GRUCell", lambda m, lib: m(_x(lib, 2, 3, 10))),
    ("GRUCell", lambda m, lib: m(_x(lib, 3, 10), _x(lib, 2, 3, 20))),
    ("RNNCell", lambda m, lib: m(_x(lib, 3, 10), _x(lib, 4, 20))),
    ("RNNCell", lambda m, lib: m(_x(lib, 3, 10, dtype="float64"))),
]


@pytest.mark.parametrize("cls, call", CELL_ERRORS)
def test_cell_errors(cls, call):
    _errors(lambda lib: getattr(lib.nn, cls)(10, 20), call)


def test_unknown_cell_nonlinearity_fails_at_call():
    _errors(lambda lib: lib.nn.RNNCell(10, 20, nonlinearity="sigmoid"),
            lambda m, lib: m(_x(lib, 3, 10)))


def test_benchmark_sizes_run_in_float32():
    """The benchmark's shape runs and keeps float32 through forward and backward."""
    lstm = ember.nn.LSTM(16, 16, 2)
    x = ember.randn(7, 2, 16, requires_grad=True)
    out, (h, c) = lstm(x)
    out.sum().backward()
    assert out.dtype == h.dtype == x.grad.dtype == lstm.weight_hh_l1.grad.dtype == ember.float32
    assert tuple(out.shape) == (7, 2, 16)


def test_docstring_examples_run():
    import doctest

    from ember.nn.modules import rnn
    result = doctest.testmod(rnn)
    assert result.attempted > 0 and result.failed == 0
