"""pytorch/examples programs with ``torch.compile`` added, under ``import ember as torch`` (REALPROG30).

The programs (condensed in ``real_programs_30.py``): word_language_model's LSTM and Transformer
training step compiled whole (``repackage_hidden``, ``clip_grad_norm_``, the manual SGD on
``p.data``), the VAE (``randn_like``, summed BCE), actor_critic's ``select_action`` and
``finish_episode`` on a NumPy cart-pole (Categorical, ``.item()``, returns normalised by ``std``)
and time_sequence_prediction's LSTMCell loop trained by LBFGS with a closure. Each runs three
iterations and must log torch 2.13's eager numbers and end with its parameters; compiled with the
``aot_eager`` backend (the same captures and graphs; the C builds would cost seconds here:
``benchmarks/bench_real_programs_30.py`` runs the default one and times it).

Found: the LSTM step ran eagerly (0 graphs): its ``data`` and ``targets`` are overlapping views of
one batchified stream, and any in-place write in a call with overlapping inputs was a break, here
the parameters' SGD update, which overlaps neither; only a write into one of the overlapping
tensors is now. Then its returned hidden state (and the loss), whose graph the step's backward
freed, came back from a replay detached (requires_grad False, eager's True), so the next call's
input differed and recompiled every other call (3 graphs); it requires grad now, through a node
whose backward raises eager's "backward through the graph a second time" (2 graphs). The VAE's
compiled model ran slower than eager: its loop trains then evaluates at each step, and every call
built the guards' World (the recheck of the other graph's call, and ``train()``/``eval()`` moving
the modules' write count, failed each recheck); both graphs keep a recheck now. The Transformer
step broke where torch's does, at the encoder's check that its mask is causal (``bool((mask ==
causal).all())``), and its backward, reaching the first piece's history, ran the rest eagerly;
under ``ember.compile`` the encoder takes the mask as given (the same numbers): 2 graphs, no break.

Not fixed (torch breaks there too): actor_critic breaks at ``from_numpy``, Categorical's checks
and ``.item()``, and its ``finish_episode`` (which uses ``del``) recompiles per episode (the saved
tensors are new) until the recompile limit, as torch's does.
"""
import numpy as np
import pytest

import ember
import real_programs_30 as programs
from ember._dynamo.utils import counters

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")

PROGRAMS = {**programs.PROGRAMS,
            "actor_critic": lambda lib, compile: programs.actor_critic(lib, compile, max_steps=12)}


def _run(lib, name, compiled):
    compile = (lambda fn: ember.compile(fn, backend="aot_eager")) if compiled else (lambda fn: fn)
    model, step = PROGRAMS[name](lib, compile=compile)
    log = [step() for _ in range(3)]
    return log, [p.detach().numpy().copy() for p in model.parameters()], step


@pytest.fixture(scope="module")
def runs():
    """``{name: (torch eager's (log, params), ember compiled's (log, params, step), its count)}``."""
    results = {}
    for name in PROGRAMS:
        ember.compiler.reset()
        counters.clear()
        ours = _run(ember, name, True)
        results[name] = _run(torch, name, False)[:2], ours, (counters["stats"]["unique_graphs"],
                                                             sum(counters["graph_break"].values()))
    ember.compiler.reset()
    return results


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_compiled_program_logs_torchs_numbers_and_ends_with_its_parameters(runs, name):
    (log, params), (got, ours, _), _ = runs[name]
    for expected, step in zip(log, got):
        np.testing.assert_allclose(step, expected, rtol=1e-5, atol=1e-6)
    for expected, p in zip(params, ours):
        np.testing.assert_allclose(p, expected, rtol=1e-5, atol=1e-6)


# graphs and breaks; torch 2.13's (a CompileCounter backend, three iterations): LSTM 4 frames (it
# breaks at the RNN and the backward), Transformer 5 (the mask check, the backward), VAE 2,
# actor_critic 9 (its guard on len(saved_actions) recompiles select_action per step), LBFGS 2
COUNTS = {"word_lm_lstm": (2, 0), "word_lm_transformer": (2, 0), "vae": (2, 0), "actor_critic": (2, 6),
          "time_sequence": (2, 0)}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_graph_counts(runs, name):
    assert runs[name][2] == COUNTS[name]  # word_lm_lstm: (0, 1) before (its step ran eagerly)


def test_a_replayed_steps_loss_and_result_require_grad_their_graph_freed():
    """As eager's: requiring grad, no leaves, a backward through them raising torch's RuntimeError."""
    ember.compiler.reset()
    for lib, compile in ((torch, lambda fn: fn), (ember, lambda fn: ember.compile(fn, backend="aot_eager"))):
        step, w = compile(lambda x, w: _sgd_step(lib, x, w)), lib.ones(3, requires_grad=True)
        for _ in range(3):
            loss, h = step(lib.arange(3.0), w)
        assert loss.requires_grad and h.requires_grad and not h.is_leaf  # (ember's replay before: False, leaves)
        for t in (loss, h):
            with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
                t.sum().backward()
    assert type(loss.grad_fn).__name__ == "CompiledFunctionBackward"  # (torch.compile's outputs' node)
    assert counters["stats"]["unique_graphs"] == 1


def _sgd_step(lib, x, w):
    h = (x * w).tanh()
    loss = h.sum()
    loss.backward()
    with lib.no_grad():
        w.sub_(0.1 * w.grad)
        w.grad = None
    return loss, h


def test_a_model_trained_then_evaluated_in_turn_keeps_its_rechecks(monkeypatch):
    """The VAE's loop (``model.train()``, a step, ``model.eval()``, an evaluation under ``no_grad``)
    built the guards' World at every call (each recheck failed: train() and eval() move
    ``STATE_VERSION``), so its compiled model ran slower than eager; now each of the two graphs
    keeps a recheck, which holds where only train/eval flags moved and each is as it was. A
    dropout's ``p`` set, or one submodule's flag alone, still takes the full path (torch's numbers)."""
    from ember.compiler import eval_frame
    from ember.compiler.guards import World
    made = []
    monkeypatch.setattr(eval_frame, "World", lambda *a, **k: made.append(1) or World(*a, **k))
    logs, counts = [], []
    for lib in (torch, ember):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Dropout(0.5), lib.nn.Linear(8, 2))
        net = ember.compile(model, backend="aot_eager") if lib is ember else model
        x, log = lib.randn(3, 4), []
        for i in range(10):
            if i in (6, 8):
                counts.append(len(made))
            if i == 8:
                model[1].p = 0.25
            model.train()
            if i == 9:
                model[1].eval()
            out = net(x)
            out.sum().backward()
            model.eval()
            with lib.no_grad():
                log.append([*out.flatten().tolist(), *net(x * 2).flatten().tolist(), *model[0].weight.grad.flatten().tolist()])
        logs.append(log)
    np.testing.assert_allclose(logs[1], logs[0], rtol=1e-5, atol=1e-6)
    assert counts[3] == counts[2] and len(made) > counts[3]  # iterations 6, 7: no World (before: one per call)
