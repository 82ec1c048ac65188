"""pytorch/examples ``dcgan/main.py``'s loop body (16x16 images, its ``.item()`` logging), compiled
whole: torch and ember split it at the ``.item()`` calls; the piece ``errD = errD_real + errD_fake;
optimizerD.step(); ...; output = netD(fake)`` runs an optimizer's step, then a forward through the
stepped parameters, its inputs' history freed by the discriminator's backwards (OPTFWD31). One
step timed in process CPU time (best of 3 rounds; the piece and ``errG.backward()`` apart, their median):
torch eager, ember eager and ``ember.compile`` of the piece or of the whole body; ratios to torch eager,
the graph counts (torch's by a ``CompileCounter`` backend) and whether the logged numbers match.

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/bench_optimizer_forward_31.py [backend] [steps]
"""
import sys
import time
import warnings

import numpy as np
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters

warnings.filterwarnings("ignore")


def dcgan(lib, compile=None, piece=False, nz=8, ngf=8, ndf=8, batch=4):
    """DCGAN's Generator and Discriminator, Adam(betas=(0.5, 0.999)), and its training loop's
    body ``step(real, noise) -> [errD, errG, D_x, D_G_z1, D_G_z2]`` (floats), compiled whole, or
    (``piece``) only its part from ``errD = errD_real + errD_fake`` to ``errG``, given the losses
    a backward freed: returns a function running one step."""
    nn = lib.nn
    lib.manual_seed(0)
    netG = nn.Sequential(nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                         nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
                         nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh())
    netD = nn.Sequential(nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
                         nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    criterion = nn.BCELoss()
    optimizerD = lib.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = lib.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

    spent = []  # seconds in the piece and errG.backward(), per step

    def update_then_forward(errD_real, errD_fake, fake, label):
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(1.0)
        output = netD(fake).view(-1)
        return errD, output, criterion(output, label)
    if piece and compile is not None:
        update_then_forward = compile(update_then_forward)

    def step(real, noise):
        netD.zero_grad()
        label = lib.full((batch,), 1.0, dtype=real.dtype)
        output = netD(real).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        fake = netG(noise)
        label.fill_(0.0)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        start = time.process_time()
        errD, output, errG = update_then_forward(errD_real, errD_fake, fake, label)
        errG.backward()
        spent.append(time.process_time() - start)
        D_G_z2 = output.mean().item()
        optimizerG.step()
        return [errD.item(), errG.item(), D_x, D_G_z1, D_G_z2]
    step = step if compile is None or piece else compile(step)
    reals, noises = lib.rand(2, batch, 3, 16, 16) * 2 - 1, lib.randn(2, batch, nz, 1, 1)
    calls = iter(range(10 ** 9))

    def one():
        i = next(calls) % 2
        return step(reals[i], noises[i])
    one.spent = spent
    return one


def _time(one, steps, warm=6):
    """``(log of the first ``warm`` steps, seconds per step, seconds per step in the piece)``: the
    best of 3 rounds (the machine is shared), the piece's median over them."""
    log, best = [one() for _ in range(warm)], float("inf")
    del one.spent[:]
    for _ in range(3):
        start = time.process_time()
        for _ in range(steps):
            one()
        best = min(best, (time.process_time() - start) / steps)
    return log, best, float(np.median(one.spent))


def main():
    backend = sys.argv[1] if len(sys.argv) > 1 else "inductor"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.set_num_threads(1)
    log, eager, piece_eager = _time(dcgan(torch), steps)
    _, e_eager, e_piece = _time(dcgan(ember), steps)
    print(f"dcgan step: torch eager {eager * 1e3:.2f} ms, ember eager {e_eager / eager:.2f}x; the piece "
          f"(step, forward, errG.backward()): torch eager {piece_eager * 1e3:.2f} ms, ember eager "
          f"{e_piece / piece_eager:.2f}x")
    for piece in (True, False):
        torch._dynamo.reset()
        counter = CompileCounter()
        one = dcgan(torch, lambda fn: torch.compile(fn, backend=counter), piece)
        for _ in range(4):
            one()
        ember.compiler.reset()
        counters.clear()
        e_log, e_compiled, e_piece = _time(dcgan(ember, lambda fn: ember.compile(fn, backend=backend), piece), steps)
        same = all(np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(log, e_log))
        print(f"  compiled {'the step-then-forward piece' if piece else 'the loop body whole'} "
              f"(backend={backend}): ember.compile {e_compiled / eager:.2f}x of torch eager"
              + (f", the piece {e_piece / piece_eager:.2f}x ({e_piece * 1e3:.2f} ms)" if piece else "") + "; graphs torch "
              f"{counter.frame_count} (CompileCounter, 4 steps) / ember {counters['stats']['unique_graphs']}, "
              f"recompiles ember {sum(counters['recompiles'].values())}; torch eager's numbers {same}", flush=True)


if __name__ == "__main__":
    main()
