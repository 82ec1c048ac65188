"""Choosing how each GEMM with its epilogue, and each convolution, runs: timed on the real
shapes, or a cost model.

GEMM candidates: 0 BLAS on the whole product, then bias and epilogue in one pass; 1 BLAS per
block of rows, each block's epilogue applied while it is in cache; 2 a direct loop (no library
call, for products so small that the call costs more than the arithmetic); 3 the packed kernel
(ember's own register-tiled GEMM for large float32 products on AVX-512, direct_gemm.py). Convolution
candidates (``Conv``, ``ConvTranspose``, ``ConvWeight``): 0 direct loops (conv.py), 1 im2col +
BLAS (conv_gemm.py), 2 and 3 Winograd F(2, 3) and F(4, 3) for 3x3 stride-1 Conv and
ConvTranspose (winograd.py). ``max_autotune`` times them (best of several runs, on scratch arrays of
the real shapes); choices are stored in ``autotune.json`` in the compile cache, keyed by
kernel signature, compiler, CPU and the code generating the candidates, and reused by later
compilations and processes (for convolutions also in the default mode, which otherwise takes
the cost model).
"""
import functools
import hashlib
import json
import os
import sys
import tempfile
import time

from . import conv, conv_gemm, toolchain, winograd
from .direct_gemm import fits, packed_fits, vector_bytes
from .python import label
from ..symbolic import Expr

__all__ = ["choose", "choose_conv", "recorded_conv", "conv_cost_model", "NAMES", "CONV_NAMES"]

NAMES = ("BLAS then epilogue", "blocked BLAS with epilogue per block", "direct kernel", "packed kernel")
CONV_NAMES = ("direct loops", "im2col + BLAS", "Winograd F(2,3)", "Winograd F(4,3)")
_L2_BYTES = 256 << 10   # output block kept in cache: a quarter of a typical 1 MiB L2
_DIRECT_MACS = 32 ** 3  # below this many multiply-adds a direct loop beats a library call
_AMD_PACKED_COLUMNS = 128  # widest product the packed kernel takes from OpenBLAS on AMD (cost_model)


def _block_rows(n, itemsize):
    return max(8, _L2_BYTES // 4 // max(1, n * itemsize))


def direct_candidate(shape):
    """Whether the direct loop is a candidate for a product of ``shape`` (M, N, K, itemsize):
    larger products never pick it, so their kernels are generated without it (it would add a
    tenth to the C compiler's time on the GPT step, for nothing)."""
    m, n, k, _ = shape
    return m * n * k <= 64 * _DIRECT_MACS and fits(n, k)


def packed_candidate(shape):
    """Whether the packed register-tiled kernel (direct_gemm.packed_lines) is a candidate for a
    product of ``shape``: float32, whole vectors of columns, too large for the direct loop."""
    m, n, k, itemsize = shape
    return packed_fits(m, n, k, itemsize) and m * n * k > 64 * _DIRECT_MACS


def planned(shape, kernel):
    """(choice, block rows) of a product of ``shape`` chosen without timing: BLAS on the whole
    product where a size is symbolic (no sizes to time), else :func:`cost_model`. Outside
    max-autotune the C holds this variant alone (gemm.gemm_kernel): on the tiny GPT step
    the packed kernels' BLAS branches were a tenth of gcc's time."""
    if any(isinstance(v, Expr) for v in shape):
        return 0, 0
    return cost_model(shape, _reads_b_transposed(kernel.nodes[0]))


def _reads_b_transposed(node):
    """Whether a GEMM node's B is a transposed matrix (F.linear's ``weight.t()``)."""
    b = node.args[-1]
    return getattr(getattr(b, "target", None), "name", None) == "Permute" and tuple(b.kwargs.get("dims", ())) == (1, 0)


def cost_model(shape, transposed_b=False):
    """The direct kernel for tiny products, and for the small ones whose B is read transposed
    (``F.linear``'s weight: OpenBLAS's transposed-B path took twice its plain one on the digits
    MLP's [32x64]@[64x128], 9.4 against 4.8 us, the direct kernel 6.4; Zen 4, one thread), else
    BLAS on the whole product. Blocks are left to ``max_autotune``: OpenBLAS packs B again for
    every block, which cost more than the cache saved on every GPT and MLP shape measured (e.g.
    [1024x128]@[128x512] + GELU: 3.47 ms in 32-row blocks, 2.67 ms in 256-row blocks, 2.52 ms
    whole; Zen 4, one thread). Large float32 products take the packed kernel on Intel CPUs
    with AVX-512: 0.75-0.85 of OpenBLAS's time on the GPT step's forward and input-gradient
    products, a tie on its weight gradients (docs/compile.md). On AMD CPUs with AVX-512 (Zen 4)
    it takes those of at most ``_AMD_PACKED_COLUMNS`` columns: there OpenBLAS runs its inner
    loop as fast, so what decides is the work around it (packing A, zeroing C for beta = 0, the
    epilogue's pass over C from memory), which the packed kernel saves; on the GPT step's
    products of 96 and 128 columns it ran 0.8-1.05 of OpenBLAS's time (timed, loaded), the
    whole step's minimum 0.89-0.98 of the old rule's in three runs of four (1.04 in one),
    while on 384 and 512 columns (a panel of 64 columns by 128 rows fills Zen 4's 32 KiB L1)
    it tied or lost (docs/compile.md). With AVX2 (tiles of 6 rows by 2 vectors of 8) only
    ``max_autotune`` takes it, where timed faster: on the GPT step's forward and input-gradient
    products it ran 0.88-0.99 of OpenBLAS's time, on its weight gradients 1.01-1.06, and the
    whole step with it where K <= M was within the noise of BLAS's (41.1-41.6 against 40.8-41.2
    ms; AMD EPYC, AVX2, one thread). With 256-bit vectors (AVX2, no AVX-512) the direct kernel
    takes every float32 product it is generated for: on an AMD EPYC (Zen 3, one thread,
    ``max_autotune``'s timings, us) it beat OpenBLAS on each such product of the digits MLP's
    and LeNet's steps, the plain layouts and the weight gradients (A transposed) too:
    [64x32]@[32x128] 7.1 against 8.5, [128x32]@[32x64] 7.0 against 8.8, [84x32]@[32x120] 8.2
    against 9.8, [120x32]@[32x400] 35.4 against 40.7."""
    m, n, k, size = shape
    if direct_candidate(shape) and (m * n * k <= _DIRECT_MACS or transposed_b or size == 4 and _avx2_only()):
        return 2, 0
    if packed_candidate(shape) and vector_bytes() == 64 and (
            cpu_vendor() == "GenuineIntel" or cpu_vendor() == "AuthenticAMD" and n <= _AMD_PACKED_COLUMNS):
        return 3, 0
    return 0, 0


def conv_cost_model(node, have_blas):
    """0 (direct loops) for products too narrow for BLAS (conv.narrow) or where im2col + BLAS
    cannot run, else Winograd where it applies (3x3, stride 1) but with fewer output tiles in
    the batch than ``_MIN_WINOGRAD_TILES`` (a Conv or ConvTranspose) or
    ``_MIN_WINOGRAD_WEIGHT_TILES`` (a ConvWeight), else 1 (im2col + BLAS). Which Winograd
    depends on the CPU (:func:`winograd_choice`)."""
    if not have_blas or not conv_gemm.candidate(node) or conv.narrow(node):
        return 0
    least = _MIN_WINOGRAD_WEIGHT_TILES if node.target.name == "ConvWeight" else _MIN_WINOGRAD_TILES
    if winograd.candidate(node) and _tiles(node) >= least:
        return winograd_choice()
    return 1


# Winograd's Conv and ConvTranspose transform the whole weight on every call (co x ci tiles):
# with few output tiles in the batch that costs more than the multiplications it saves. On
# a CIFAR ResNet-18 step (batch 8; AMD EPYC, one thread, process CPU time) F(2, 3) against
# im2col + BLAS: 512 channels on 4x4 planes (32 tiles) 16.8 against 7.8 ms forward, 17.2
# against 8.5 input gradient; 256 on 8x8 (128 tiles) 6.7 against 7.2 and 6.8 against 6.7;
# 128 on 16x16 4.6 against 7.0 and 4.5 against 6.5.
_MIN_WINOGRAD_TILES = 64
# The weight gradient's products sum over the tiles (K of its 16 products of co x ci): with few
# tiles they are short and its result's transform (co x ci tiles) costs as much as the products
# saved, while im2col + BLAS makes one product of the batch's positions written straight into
# the gradient (conv_gemm). Same step, CPU time: 512 channels on 4x4 planes (32 tiles) F(2, 3)
# 9.4-9.8 against 7.1 ms, 256 on 8x8 (128 tiles) 7.8 against 6.6-6.8; 128 on 16x16 (512 tiles)
# 4.6 against 7.0-7.1, 64 on 32x32 5.1 against 8.5-8.6.
_MIN_WINOGRAD_WEIGHT_TILES = 256


def _tiles(node):
    """F(2, 3)'s output tiles over the whole batch of a Conv or ConvTranspose node's output, or
    of a ConvWeight node's output gradient."""
    n, _, h, w = (node.args[1] if node.target.name == "ConvWeight" else node).meta["shape"]
    return n * ((h + 1) // 2) * ((w + 1) // 2)


def winograd_choice():
    """3 (F(4, 3)) on Intel CPUs, else 2 (F(2, 3)). On AMD EPYC (Zen 4) F(2, 3) halved
    bench_compile's Conv2d(16, 32, 3) forward and input gradient against im2col + BLAS and
    F(4, 3) was between the two (its 36 products per block too short for BLAS at 16 and 32
    channels: 551 against 709 us forward). On an Intel Xeon (AVX-512) the same products run
    faster in OpenBLAS and F(4, 3) wins each of the three kernels (timed: forward 383 against
    485 us, input gradient 537 against 702, weight gradient 688 against 894; the whole step
    1.79-1.87 against 2.36 ms, one thread, loaded). F(4, 3) rounds more (2e-5 of the largest
    output against 2e-6, docs/compile.md); ``max_autotune`` times both on any CPU."""
    return 3 if cpu_vendor() == "GenuineIntel" else 2


def _avx2_only():
    """Whether the generated code's widest vectors are AVX2's 256 bits (no AVX-512)."""
    return vector_bytes() == 32 and " avx2 " in f" {toolchain.cpu_identity()} "


@functools.lru_cache(maxsize=None)
def cpu_vendor():
    """``vendor_id`` of /proc/cpuinfo (``"GenuineIntel"``, ``"AuthenticAMD"``), or ``""``."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _generators(family):
    """A digest of the code that generates a kernel family's candidates ("gemm", "conv"), as
    loaded, with the runtime headers: a record timed on other kernels is stale (not used; timed
    again). The modules are read from sys.modules (cgen imports this one)."""
    package = __name__.rsplit(".", 1)[0]
    names = ("cgen", "kernels") + (("conv", "conv_gemm", "winograd") if family == "conv" else ("gemm",))
    return toolchain.code_digest([sys.modules[f"{package}.{name}"] for name in names]) + \
        hashlib.sha256(toolchain.runtime_headers().encode()).hexdigest()


def _key(fname, shape, kernel, compiler):
    node = kernel.nodes[0]
    epilogue = ",".join(label(n).split("(")[0] for n in kernel.sums + (kernel.epilogue.nodes if kernel.epilogue else []))
    text = "|".join([node.target.name, repr(shape), epilogue, " ".join(compiler),
                     toolchain.compiler_identity(tuple(compiler)), toolchain.cpu_identity(),
                     _generators("conv" if fname == "conv" else "gemm")])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def conv_signature(kernel):
    """What a convolution's timing depends on: op, operand shapes, geometry and dtype (the
    fused loop is part of _key)."""
    node = kernel.nodes[0]
    shapes = [tuple(a.meta["shape"]) if hasattr(a, "meta") else None for a in node.args[:3]]
    return repr((node.target.name, shapes, tuple(node.meta["shape"]), str(node.meta["dtype"]),
                 sorted((k, repr(v)) for k, v in node.kwargs.items())))


def _path():
    # (not cached: the cache directory follows XDG_CACHE_HOME, which a process may change; a
    # stale path made the compile cache's key read another directory's records)
    return toolchain.cache_dir() / "autotune.json"


def _load():
    try:
        return json.loads(_path().read_text())
    except (OSError, ValueError):
        return {}


def records_digest():
    """A digest of the recorded choices. Generated code embeds them (a convolution is built with
    its recorded variant only), so the compile cache keys on it: a new record means new code."""
    try:
        return hashlib.sha256(_path().read_bytes()).hexdigest()[:16]
    except OSError:
        return "none"


def _store(key, value):
    table = _load()
    table[key] = value
    fd, tmp = tempfile.mkstemp(dir=_path().parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        json.dump(table, f)
    os.replace(tmp, _path())


def _time(fn, table, choice, block, repeat=5):
    fn(table, choice, block)  # warm: pages faulted in, BLAS threads started
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(table, choice, block)
        best = min(best, time.perf_counter() - start)
    return best


def recorded_conv(kernel, compiler, have_blas):
    """(choice, how) for a convolution kernel without timing: the choice ``max_autotune``
    recorded for it ("cached"), else the cost model's."""
    node = kernel.nodes[0]
    if have_blas and conv_gemm.candidate(node) and not conv.symbolic_image(node):  # (that: im2col + BLAS only)
        cached = _load().get(_key("conv", conv_signature(kernel), kernel, compiler))
        if cached is not None and cached[0] in conv_gemm.applicable(node, have_blas):
            return cached[0], "cached"
    return conv_cost_model(node, have_blas), "cost model"


def choose_conv(kernel, fn, scratch, compiler, have_blas):
    """(choice, how it was chosen) for a convolution kernel ``fn(table, choice)``: as
    :func:`recorded_conv`, except that with ``scratch`` (a pointer table of scratch arrays) a
    kernel without a record has every applicable candidate timed and the fastest recorded."""
    choice, how = recorded_conv(kernel, compiler, have_blas)
    if scratch is None or how == "cached" or not (have_blas and conv_gemm.candidate(kernel.nodes[0])):
        return choice, how
    timed = {c: _time(lambda table, choice, _: fn(table, choice), scratch, c, 0)
             for c in conv_gemm.applicable(kernel.nodes[0], have_blas)}
    best = min(timed, key=timed.get)
    _store(_key("conv", conv_signature(kernel), kernel, compiler), [best, 0])
    return best, "timed: " + ", ".join(f"{CONV_NAMES[c]} {t * 1e6:.1f} us" for c, t in timed.items())


def choose(fname, shape, kernel, fn, scratch, compiler):
    """(choice, block rows, how it was chosen)."""
    if scratch is None:
        return (*planned(shape, kernel), "cost model")
    key = _key(fname, shape, kernel, compiler)
    cached = _load().get(key)
    if cached is not None:
        return cached[0], cached[1], "cached"
    m, n, k, size = shape
    candidates = [(0, 0), (1, _block_rows(n, size))]
    if direct_candidate(shape):
        candidates.append((2, 0))
    if packed_candidate(shape):
        candidates.append((3, 0))
    timed = {c: _time(fn, scratch, *c) for c in candidates}
    best = min(timed, key=timed.get)
    _store(key, list(best))
    detail = ", ".join(f"{NAMES[c][:14]} {t * 1e6:.1f} us" for (c, _), t in timed.items())
    return best[0], best[1], f"timed: {detail}"
