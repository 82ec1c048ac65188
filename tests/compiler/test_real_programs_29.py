"""Real public PyTorch programs with ``torch.compile`` added, under ``import ember as torch`` (REALPROG29).

The programs (condensed in ``real_programs_29.py``, each naming its source) run on tiny synthetic
data: pytorch/examples' DCGAN loop body compiled whole, lucidrains' ViT and karpathy's minGPT
(training, then its sampling loop) as ``torch.compile(model)``; each must print torch 2.13's
eager losses (and minGPT its sampled tokens). Every program is compiled once for the module (the
tests share the runs). (fast_neural_style's TransformerNet, a CIFAR ResNet-18 and
super_resolution matched too, model and whole step compiled, but their C builds cost 5-45 s.)

Found: DCGAN's loop body compiled whole ran eagerly, a graph break "returns a tensor requiring
grad whose graph it retained": its ``D_x = output.mean()`` is taken after ``errD_real.backward()``
freed the discriminator's graph under it, yet the mean's own node kept saved values. A backward
through such a tensor raises eagerly too, so a replay returns it as a loss after its backward:
requiring grad, a backward through it raising (``aot.retained_history``, REALPROG30); the step is one
graph now.

torch 2.13 (a ``CompileCounter`` backend) counted the same graphs for ``compile(model)`` here
(one per train batch size, one for eval) but one more in minGPT's sampling loop: it specialises
the length ``T == block_size`` (the cut ``bias[:, :, :T, :T]`` is then the whole, contiguous,
buffer); ember's dynamic graph serves that length too.
"""
import numpy as np
import pytest

import ember
import real_programs_29 as programs
from ember._dynamo.utils import counters

torch = pytest.importorskip("torch")


def _count():
    return counters["stats"]["unique_graphs"], dict(counters["graph_break"])


def _dcgan(lib, compiled):
    lib.manual_seed(0)
    step, nz = programs.dcgan(lib)
    step = lib.compile(step) if compiled else step
    reals, noises = lib.rand(2, 4, 3, 16, 16) * 2 - 1, lib.randn(2, 4, nz, 1, 1)
    out = [step(reals[i % 2], noises[i % 2]) for i in range(4)]
    return [[t.item() for t in o] for o in out], out[-1][2].requires_grad, _count()


def _epochs(lib, model, opt, images):
    """Two epochs of a CIFAR-style loop: batches of 4 (the last of 3), loss and accuracy read by
    ``.item()``, an eval batch under ``no_grad``, a scheduler per epoch."""
    sched, crit = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3), lib.nn.CrossEntropyLoss()
    xs, ys = lib.randn(11, 3, images, images), lib.randint(0, 10, (11,))

    def train_step(x, y):
        opt.zero_grad()
        out = model(x)
        loss = crit(out, y)
        loss.backward()
        opt.step()
        return loss.item(), out.argmax(dim=1).eq(y).sum().item()

    def eval_step(x, y):
        with lib.no_grad():
            out = model(x)
            return crit(out, y).item(), (out.argmax(1) == y).sum().item()
    log = []
    for _ in range(2):
        model.train()
        log += [train_step(xs[i:i + 4], ys[i:i + 4]) for i in range(0, 11, 4)]
        sched.step()
        model.eval()
        log.append(eval_step(xs[:6], ys[:6]))
    return log, _count()


def _vit(lib, compiled):
    lib.manual_seed(0)
    model = programs.vit(lib)
    net = lib.compile(model) if compiled else model
    return _epochs(lib, net, lib.optim.AdamW(model.parameters(), lr=1e-3), 16)


def _mingpt(lib, compiled):
    """minGPT's trainer step (AdamW, ``clip_grad_norm_``) on the compiled model, then its
    ``generate`` (context grown to ``block_size`` then cropped, top-k, ``multinomial``)."""
    lib.manual_seed(0)
    model = programs.mingpt(lib)
    net = lib.compile(model) if compiled else model
    opt = lib.optim.AdamW(model.parameters(), lr=5e-4, betas=(0.9, 0.95), weight_decay=0.1)
    data, losses = lib.randint(0, 16, (2, 4, 9)), []
    for i in range(4):
        x, y = data[i % 2, :, :-1].contiguous(), data[i % 2, :, 1:].contiguous()
        opt.zero_grad(set_to_none=True)
        _, loss = net(x, y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    trained = _count()
    model.eval()
    idx = lib.zeros(1, 1, dtype=lib.long)
    with lib.no_grad():
        for _ in range(10):
            logits, _ = net(idx if idx.size(1) <= model.block_size else idx[:, -model.block_size:])
            logits = logits[:, -1, :] / 0.8
            v, _ = lib.topk(logits, 5)
            logits[logits < v[:, [-1]]] = -float("Inf")
            idx = lib.cat((idx, lib.multinomial(lib.nn.functional.softmax(logits, dim=-1), num_samples=1)), dim=1)
    return losses, trained, idx.tolist(), _count()


PROGRAMS = {"dcgan": _dcgan, "vit": _vit, "mingpt": _mingpt}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``{name: (torch eager's result, ember compiled's result)}`` per program."""
    results = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        for name, program in PROGRAMS.items():
            ember.compiler.reset()
            counters.clear()
            results[name] = program(torch, False), program(ember, True)
        ember.compiler.reset()
    return results


def test_dcgan_step_compiled_whole_is_one_graph_with_torchs_losses(runs):
    (expected, needs_grad, _), (got, ours, count) = runs["dcgan"]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert count == (1, {})  # (before: 0 graphs, the step ran eagerly)
    assert needs_grad and ours  # D_x requires grad, its node freed by the backward, as torch's


def test_vit_compiled_model_with_dropout_trains_and_evaluates_as_torch(runs):
    (expected, _), (got, count) = runs["vit"]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert count == (3, {})  # as torch's CompileCounter: batch 4, batch 3, eval


def test_mingpt_compiled_model_trains_and_samples_torchs_tokens(runs):
    (losses, _, tokens, _), (got, trained, ours, sampled) = runs["mingpt"]
    np.testing.assert_allclose(got, losses, rtol=1e-5)
    assert ours == tokens
    # + no_grad at length 1, one dynamic graph from length 2, the cropped (strided) context idx[:, -8:]:
    # torch's 4 and its T == block_size graph
    assert trained == (1, {}) and sampled == (4, {})
