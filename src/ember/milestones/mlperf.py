"""2018 — MLPerf: what a model costs to run, not only what it scores.

MLPerf (first results in December 2018; Mattson et al., *MLPerf Training Benchmark*, MLSys
2020; Reddi et al., *MLPerf Inference Benchmark*, ISCA 2020) made the field report, under
fixed rules, what it takes to reach a quality target: quality is a bound to meet, and the
figures that count are latency percentiles (its single-stream scenario reports the 90th),
throughput (its offline scenario) and what the model needs in memory. The same years made
inference cheaper: weights stored as 8-bit integers (Jacob et al., *Quantization and
Training of Neural Networks for Efficient Integer-Arithmetic-Only Inference*, CVPR 2018;
PyTorch's dynamic quantization), weights of small magnitude removed (Han et al., *Learning
both Weights and Connections for Efficient Neural Networks*, NeurIPS 2015), and, for
autoregressive transformers, a cache of every position's keys and values.

The milestone trains three models of the ladder once each, with their own milestones'
training functions: the 1986 MLP and the 1998 LeNet-5 on the digits, as their milestones
train them, and the 2017 tiny GPT with the transformer milestone's fast settings (its full
training alone takes two minutes); ``fast`` trains each for a few seconds (:data:`FAST`).
Each is then measured as trained and after each technique:

- ``float32``: the trained model.
- ``int8 dynamic``: ``ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=qint8)``.
  Linear weights are stored as int8 with a scale, a quarter of the bytes. ember's kernel
  multiplies by the dequantized weight in float32 (PyTorch's fbgemm kernel also rounds the
  activations to 8 bits for an integer product), so the time does not shrink. Convolutions
  stay float32, as in PyTorch.
- ``50% pruned``: ``nn.utils.prune.global_unstructured`` with ``L1Unstructured`` and
  ``amount=0.5`` over the weights of the Linear (and Conv2d) layers, made permanent with
  ``prune.remove``. Half the weights are zero, but the tensors stay dense: neither the bytes
  nor the time shrink on a CPU, which the table shows.
- ``compiled``: ``ember.compile(model, dynamic=False)``, the float32 model captured once per
  input shape and run as generated C (see ``docs/compile.md``); for the GPT,
  ``ember.compile`` of :class:`ember.models.gpt.StaticKVDecoder`'s step (greedy decoding one
  position per call with a static KV cache, after an eager pass over the prompt: a graph per
  batch size, as ``benchmarks/bench_compile.py``'s ``gpt_decode_token``). The row's ``compile s`` is the CPU
  time of the first calls at the two shapes measured (capture, code generation and the C
  compiler, whose processes are counted, or the on-disk cache of an earlier run). Its peak
  memory counts the tensors it returns: the generated code's buffers are not tensor storage.
- ``torch eager`` and ``torch.compile`` (when PyTorch is installed; a printed line says so
  otherwise): the same trained weights in the same layers of ``torch.nn`` (the GPT:
  ``ember/models/gpt.py`` as PyTorch code, generating with its KV cache), run by PyTorch on one
  thread (``torch.set_num_threads(1)`` while measured), the compiled one with
  ``torch.compile(model, dynamic=False)`` (inductor; the GPT's static-cache step, as ember's
  ``compiled`` row), whose first calls at the two shapes
  (10-60 s of compiling; less from inductor's own cache) are its ``compile s``: a lower bound,
  as inductor's pool of compile workers outlives the calls and its CPU is not counted. Inputs and outputs cross between the
  libraries as zero-copy NumPy views. Fast runs skip ``torch.compile``: it alone would take
  longer than the whole run. Peak memory counts only the ember tensors they return.
- ``no KV cache`` (GPT only): ``generate(..., use_cache=False)`` re-reads the whole context
  for every new token. One sequence at a time, a token costs ember mostly per-op overhead,
  which the cache does not remove: the cache then buys about 2.5-3× at 256 tokens. In a batch
  the uncached work grows with the batch and the cached work hardly, hence the throughput
  run below.

The GPT's ``lm_head`` shares its weight with the token embedding, which is read by lookup:
it stays float32 and dense in every variant; quantization and pruning act on its blocks.

Figures per model and variant (the table, ``mlperf.json`` and ``mlperf.png``):

- quality: test accuracy (MLP, LeNet-5); the GPT's teacher-forced cross-entropy on the
  answers of its training pairs, and the fraction of those it answers exactly;
- latency p50/p90 (ms): one digit, one image, or one GPT answer of ``ANSWER_TOKENS`` greedy
  tokens after a training question;
- throughput, in one batch as in MLPerf's offline scenario: the whole test split
  (samples/s), or ``STREAMS`` questions continued greedily until the GPT's 256-position
  context is full (tokens/s);
- parameters: elements of the distinct tensors of ``state_dict`` (a tied weight counts once);
- model bytes: their storage, what a checkpoint of the model holds;
- sparse bytes: what that storage would be with each tensor kept sparse where that is smaller
  (its nonzero values plus a mask of one bit per element): what pruning would save with a
  sparse format (with an int32 index per value instead, 50 % sparsity would save nothing);
- peak memory: the most bytes of tensor storage held during one throughput run beyond what
  was held when it began (activations; a kernel's scratch arrays are not tensor storage),
  from ``ember.max_memory_allocated``;
- sparsity: the fraction of those elements that are zero.

Times are process CPU time (``time.process_time``), which other processes on a shared
machine do not inflate; these models are small enough that ember's BLAS computes them on
one thread. Thresholds: the int8 MLP keeps its accuracy within 2 points of float32 in at
most 30 % of the bytes, and the KV cache makes generation at 256 tokens at least 3× faster.
The report and the chart go to :func:`report_dir` unless :func:`milestone` is given a folder.
"""
import copy
import dataclasses
import functools
import json
import resource
import textwrap
import time
from pathlib import Path

import numpy as np

import ember
from ember import nn
from ember.ao.quantization import quantize_dynamic
from ember.cli.table import format_table
from ember.models.gpt import StaticKVDecoder
from ember.nn.utils import prune
from ember.serialization import _write_atomically
from ember.text import format_prompt, load_qa

from . import backprop, lenet, transformer
from .milestone import Check, Milestone, Threshold
from .mlperf_torch import TORCH_COMPILED, TORCH_EAGER, in_torch
from .training import class_accuracy

FLOAT, INT8, PRUNED, COMPILED, NO_CACHE = "float32", "int8 dynamic", "50% pruned", "compiled", "no KV cache"
ANSWER_TOKENS = 24
PRUNE_AMOUNT = 0.5
REPORT, CHART = "mlperf.json", "mlperf.png"
THRESHOLDS = (Threshold("MLP int8 accuracy drop (points)", 2.0, at_most=True),
              Threshold("MLP int8 bytes / float32 bytes", 0.30, at_most=True),
              Threshold("GPT KV-cache speedup at 256 tokens", 3.0))


@dataclasses.dataclass(frozen=True)
class Settings:
    """How long to train and how much to measure.

    Attributes:
        mlp_fast: train the MLP with the backprop milestone's fast settings.
        lenet_epochs: passes of LeNet-5 over the digits.
        gpt_train_every, gpt_epochs: the GPT trains on every ``gpt_train_every``-th pair of
            the Q&A training split for ``gpt_epochs`` passes.
        latency_calls, gpt_latency_calls: single-example calls timed for the latency
            percentiles of the classifiers and of the GPT.
        repeats: throughput runs; the fastest counts.
        torch_compile: measure ``torch.compile`` too (when PyTorch is installed).
    """

    mlp_fast: bool
    lenet_epochs: int
    gpt_train_every: int
    gpt_epochs: int
    latency_calls: int
    gpt_latency_calls: int
    repeats: int
    torch_compile: bool = True


# Full: the MLP and LeNet-5 as their milestones train them, the GPT with the transformer
# milestone's fast settings (its full training alone takes two minutes). Fast (for tests): a
# few seconds of training each; the GPT then answers poorly, which no threshold depends on.
FULL = Settings(False, lenet.DIGITS.epochs, transformer.FAST_TRAIN_EVERY,
                transformer.FAST_GPT_EPOCHS, 200, 30, 2)
FAST = Settings(True, 1, 2 * transformer.FAST_TRAIN_EVERY, 20, 40, 3, 1, torch_compile=False)
STREAMS = 4  # sequences generated at once in the GPT's throughput run


@dataclasses.dataclass
class Measurement:
    """One row of the report: a model in one variant (units in the field names)."""

    model: str
    variant: str
    quality: dict
    latency_p50_ms: float
    latency_p90_ms: float
    throughput: float
    throughput_unit: str
    parameters: int
    model_bytes: int
    sparse_bytes: int
    peak_memory_bytes: int
    sparsity: float
    compile_seconds: float = None  # compiled rows: CPU seconds of the first calls


def report_dir():
    """Where the milestone writes its report: ``$XDG_CACHE_HOME/ember/mlperf``, by default
    ``~/.cache/ember/mlperf``."""
    return transformer.checkpoint_dir().parent / "mlperf"


def state_tensors(model):
    """The distinct tensors of ``model.state_dict()``: a weight shared by two modules once."""
    seen = {}
    for tensor in model.state_dict().values():
        seen.setdefault(tensor.data_ptr(), tensor)
    return list(seen.values())


def size_figures(model):
    """``(parameters, model_bytes, sparse_bytes, sparsity)`` of ``model`` (see the module
    docstring)."""
    tensors = state_tensors(model)
    elements = sum(t.numel() for t in tensors)
    nonzeros = [int((t != 0).sum().item()) for t in tensors]
    sparse = sum(min(t.nbytes, nnz * t.element_size() + -(-t.numel() // 8)) for t, nnz in zip(tensors, nonzeros))
    return elements, sum(t.nbytes for t in tensors), sparse, 1 - sum(nonzeros) / elements


def cpu_times(fn, calls):
    """Process CPU seconds of ``fn(i)`` for ``i`` in ``range(calls)``, as a NumPy array."""
    times = np.empty(calls)
    for i in range(calls):
        start = time.process_time()
        fn(i)
        times[i] = time.process_time() - start
    return times


def cpu_seconds_with_children(fn):
    """Process CPU seconds of ``fn()`` plus those of the child processes it waited for (ember's
    C compiler); a worker pool that outlives the call (inductor's) is not counted."""
    def children():
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime
    start, before = time.process_time(), children()
    fn()
    return time.process_time() - start + children() - before


def fastest_and_peak(fn, repeats):
    """The least process CPU seconds of ``repeats`` calls of ``fn()``, and the most bytes of
    tensor storage held during the first call beyond those held before it."""
    ember.reset_peak_memory_stats()
    held = ember.memory_allocated()
    first = cpu_times(lambda _: fn(), 1)[0]
    peak = ember.max_memory_allocated() - held
    return min([first, *cpu_times(lambda _: fn(), repeats - 1)]), peak


def quantized(model, part=None):
    """A copy of ``model`` whose Linear layers (within its submodule ``part``, if given) are
    int8-quantized dynamically."""
    if part is None:
        return quantize_dynamic(model, {nn.Linear}, dtype=ember.qint8)
    model = copy.deepcopy(model)
    quantize_dynamic(getattr(model, part), {nn.Linear}, dtype=ember.qint8, inplace=True)
    return model


def pruned(model, kinds, part=None):
    """A copy of ``model`` with half the weights of its ``kinds`` layers (within submodule
    ``part``, if given) set to zero by global L1 magnitude, pruning made permanent."""
    model = copy.deepcopy(model)
    root = model if part is None else getattr(model, part)
    weights = [(module, "weight") for module in root.modules() if isinstance(module, kinds)]
    prune.global_unstructured(weights, pruning_method=prune.L1Unstructured, amount=PRUNE_AMOUNT)
    for module, name in weights:
        prune.remove(module, name)
    return model


def measurement(name, variant, model, quality, latency, run, items, unit, settings, compile_seconds=None):
    """A :class:`Measurement` from the CPU seconds of single calls (``latency``) and from
    ``settings.repeats`` throughput runs ``run()`` of ``items`` items each."""
    p50, p90 = np.percentile(latency, [50, 90]) * 1e3
    seconds, peak = fastest_and_peak(run, settings.repeats)
    parameters, model_bytes, sparse_bytes, sparsity = size_figures(model)
    return Measurement(name, variant, quality, float(p50), float(p90), float(items / seconds), unit,
                       parameters, model_bytes, sparse_bytes, peak, sparsity, compile_seconds)


def measure_classifier(name, variants, inputs, targets, settings):
    """Rows for a classifier in each of ``variants`` (label → model), on a test split:
    ``inputs`` ``(N, ...)`` float32, ``targets`` ``(N,)`` int64."""
    rows = []
    with ember.no_grad():
        for variant, model in variants.items():
            # the first calls at both shapes: a compiled model captures and builds its graphs there
            first = cpu_seconds_with_children(lambda: [model(inputs[:1] if i % 2 else inputs) for i in range(4)])
            latency = cpu_times(lambda i: model(inputs[i % len(inputs)].unsqueeze(0)),
                                settings.latency_calls)
            rows.append(measurement(name, variant, model,
                                    {"accuracy": class_accuracy(model, inputs, targets)},
                                    latency, lambda: model(inputs), len(inputs), "samples/s", settings,
                                    first if variant in (COMPILED, TORCH_COMPILED) else None))
    return rows


def measure_gpt(variants, tokenizer, pairs, settings):
    """Rows for the GPT in each of ``variants`` (label → ``(model, generate)``: the ember model,
    whose quality and sizes the row shows, and its greedy ``generate(idx, max_new_tokens)``),
    on the pairs it was trained on.

    Latency: one answer of ``ANSWER_TOKENS`` greedy tokens to one question. Throughput, as in
    MLPerf's offline scenario, in a batch: ``STREAMS`` questions, each cut from the front to
    the shortest one's length, continued greedily until the 256-position context is full.
    Compiled rows' ``compile s``: their first generations at both batch sizes (of 2 tokens).
    """
    prompts = [[tokenizer.bos_id] + tokenizer.encode(format_prompt(pair["question"])) for pair in pairs]
    shortest = min(len(prompt) for prompt in prompts[:STREAMS])
    batch = ember.tensor([[prompt[0]] + prompt[len(prompt) + 1 - shortest:] for prompt in prompts[:STREAMS]])
    prompts = [ember.tensor([prompt]) for prompt in prompts]
    inputs, targets, _ = transformer.qa_rows(pairs, tokenizer)
    inputs, targets = ember.from_numpy(inputs), ember.from_numpy(targets)
    rows, qualities = [], {}
    with ember.no_grad():
        for variant, (model, generate) in variants.items():
            if id(model) not in qualities:  # the cache and the compiler change the cost, not the predictions
                qualities[id(model)] = {"loss": model(inputs, targets)[1].item(),
                                        "answers exact": transformer.answers_exact(model, tokenizer, pairs)}
            first = None
            if variant in (COMPILED, TORCH_COMPILED):
                first = cpu_seconds_with_children(lambda: [generate(tokens, 2) for tokens in (prompts[0], batch)])
            latency = cpu_times(lambda i: generate(prompts[i % len(prompts)], ANSWER_TOKENS),
                                settings.gpt_latency_calls)
            new_tokens = model.config.block_size - shortest
            rows.append(measurement("GPT", variant, model, qualities[id(model)], latency,
                                    functools.partial(generate, batch, new_tokens),
                                    STREAMS * new_tokens, "tokens/s", settings, first))
    return rows


def gpt_variants(model, torch_rows):
    """The GPT's variants for :func:`measure_gpt`: as trained, quantized and pruned blocks,
    with and without the KV cache (``generate(..., top_k=1)``), ``compiled`` (greedy decoding
    one position per call through ``ember.compile`` of
    :class:`ember.models.gpt.StaticKVDecoder`'s step, ``dynamic=False``: a graph per batch
    size), and PyTorch's (``torch_rows(model)``, see :func:`in_torch`)."""
    made = {label: (variant, functools.partial(variant.generate, top_k=1)) for label, variant in variants(
        model, functools.partial(quantized, part="blocks"),
        functools.partial(pruned, kinds=nn.Linear, part="blocks")).items()}
    made[NO_CACHE] = (model, functools.partial(model.generate, top_k=1, use_cache=False))
    decoder = StaticKVDecoder(model)
    made[COMPILED] = (model, functools.partial(decoder.generate, decode=ember.compile(decoder.decode, dynamic=False)))
    made.update({label: (model, generate) for label, generate in torch_rows(model).items()})
    return made


def variants(model, quantize, sparsify, compiled=False):
    """``model`` as trained, quantized, pruned and, with ``compiled``, compiled (label → model)."""
    made = {FLOAT: model, INT8: quantize(model), PRUNED: sparsify(model)}
    if compiled:
        made[COMPILED] = ember.compile(model, dynamic=False)
    return made


def train(fast=False, seed=0, quiet=False, out_dir=None):
    """Train the three models, measure every variant, print the table, and write the report
    and the chart into ``out_dir`` (default :func:`report_dir`, created if missing).

    Returns:
        ``(metrics, histories)`` as :class:`Milestone` expects: the thresholds' metrics and
        each model's training curves.
    """
    settings = FAST if fast else FULL
    mlp, mlp_history, (x_test, y_test) = backprop.train_mlp(settings.mlp_fast, seed, quiet)
    net, lenet_history, test_loader = lenet.train_lenet(
        False, seed, quiet, dataclasses.replace(lenet.DIGITS, epochs=settings.lenet_epochs))
    images, labels = (ember.cat(parts) for parts in zip(*test_loader))
    pairs = load_qa("train")[::settings.gpt_train_every]
    gpt_history, gpt, tokenizer = transformer.train_gpt(pairs, settings.gpt_epochs, seed, quiet)

    torch_rows = in_torch(settings.torch_compile)
    rows = measure_classifier(
        "MLP", {**variants(mlp, quantized, functools.partial(pruned, kinds=nn.Linear), compiled=True),
                **torch_rows(mlp)}, x_test, y_test, settings)
    rows += measure_classifier(
        "LeNet-5", {**variants(net, quantized, functools.partial(pruned, kinds=(nn.Linear, nn.Conv2d)),
                               compiled=True), **torch_rows(net)},
        images, labels, settings)
    rows += measure_gpt(gpt_variants(gpt, torch_rows), tokenizer, pairs, settings)

    metrics = threshold_metrics(rows)
    checks = [Check(threshold, metrics[threshold.metric]) for threshold in THRESHOLDS]
    notes = explanations(rows, settings)
    print(format_report(rows))
    print("\n".join(f"note: {note}" for note in notes))
    written = write_outputs(Path(out_dir if out_dir is not None else report_dir()),
                            rows, checks, fast, seed, notes)
    print(f"mlperf: wrote {' and '.join(map(str, written))}")
    return metrics, {"MLP (test accuracy)": mlp_history, "LeNet-5 (test accuracy)": lenet_history,
                     "GPT (training answers exact)": gpt_history}


def find(rows, model, variant):
    """The row of ``model`` in ``variant``."""
    return next(row for row in rows if (row.model, row.variant) == (model, variant))


def threshold_metrics(rows):
    """Each threshold's metric, from the rows."""
    mlp, mlp_int8 = find(rows, "MLP", FLOAT), find(rows, "MLP", INT8)
    return {
        THRESHOLDS[0].metric: 100 * (mlp.quality["accuracy"] - mlp_int8.quality["accuracy"]),
        THRESHOLDS[1].metric: mlp_int8.model_bytes / mlp.model_bytes,
        THRESHOLDS[2].metric: find(rows, "GPT", FLOAT).throughput / find(rows, "GPT", NO_CACHE).throughput}


def explanations(rows, settings):
    """What a reader would otherwise misread in the table and the chart, with the figures."""
    mlp, mlp_int8, mlp_pruned = (find(rows, "MLP", variant) for variant in (FLOAT, INT8, PRUNED))
    cached, uncached = find(rows, "GPT", FLOAT), find(rows, "GPT", NO_CACHE)
    compiled = [(find(rows, model, FLOAT), find(rows, model, COMPILED)) for model in ("MLP", "LeNet-5", "GPT")]
    return [
        f"{INT8}: Linear weights take a quarter of the bytes ({mlp_int8.model_bytes:,} vs {mlp.model_bytes:,} for "
        f"the MLP), but ember's int8 Linear is a reference kernel that dequantizes the weight to float32 for "
        f"every product, so it is slower than float32 here, not faster; a compiled int8 kernel would change that",
        f"{PRUNED}: the zeros are stored densely, so 'bytes' does not shrink; stored sparse (nonzero values and a "
        f"one-bit-per-element mask) the MLP would take {mlp_pruned.sparse_bytes:,} bytes instead of {mlp_pruned.model_bytes:,} "
        f"('sparse bytes'), and dense kernels take as long on zeros",
        f"GPT quality: to keep this milestone short the GPT trains on {len(load_qa('train')[::settings.gpt_train_every])} "
        f"pairs for {settings.gpt_epochs} epochs (the transformer milestone's fast settings), so its loss and "
        f"exact answers differ from the transformer milestone's full run",
        f"KV cache, same lengths with and without it: one answer of {ANSWER_TOKENS} tokens takes "
        f"{cached.latency_p50_ms:.1f} vs {uncached.latency_p50_ms:.1f} ms (p50; a short context, where the cache "
        f"saves little), {STREAMS} streams filled to 256 positions run at {cached.throughput:,.0f} vs "
        f"{uncached.throughput:,.0f} tokens/s ({cached.throughput / uncached.throughput:.1f}x, the threshold's "
        f"speedup: the longer the context, the more the cache saves)",
        f"{COMPILED}: " + "; ".join(
            f"{eager.model} {fast.throughput:,.0f} vs {eager.throughput:,.0f} {eager.throughput_unit} in one batch, "
            f"{fast.latency_p50_ms:.3f} vs {eager.latency_p50_ms:.3f} ms for one (p50), after "
            f"{fast.compile_seconds:.2f} s of first calls" for eager, fast in compiled)
        + " (a graph per shape, generated C; a warm on-disk cache makes the first calls fast; the GPT reads its "
        "prompt in one eager pass, then decodes one position per call with a static KV cache)"] + [
        f"{model} in PyTorch, the same weights on one thread: " + ", ".join(
            f"{row.variant} {row.throughput:,.0f} {row.throughput_unit} in one batch, {row.latency_p50_ms:.3f} ms "
            f"for one" + (f", after {row.compile_seconds:.1f} s of first calls" if row.compile_seconds else "")
            for row in rows if row.model == model and row.variant in (TORCH_EAGER, TORCH_COMPILED))
        for model in ("MLP", "LeNet-5", "GPT") if any((r.model, r.variant) == (model, TORCH_EAGER) for r in rows)]


def format_report(rows):
    """The rows as a text table."""
    def quality(row):
        return ", ".join(f"{key} {value:.4f}" for key, value in row.quality.items())
    return format_table(
        ["model", "variant", "quality", "p50 ms", "p90 ms", "throughput", "params", "bytes",
         "sparse bytes", "peak bytes", "sparsity", "compile s"],
        [(row.model, row.variant, quality(row), f"{row.latency_p50_ms:.3f}",
          f"{row.latency_p90_ms:.3f}", f"{row.throughput:,.0f} {row.throughput_unit}",
          f"{row.parameters:,}", f"{row.model_bytes:,}", f"{row.sparse_bytes:,}",
          f"{row.peak_memory_bytes:,}",
          f"{row.sparsity:.2f}", "" if row.compile_seconds is None else f"{row.compile_seconds:.2f}")
         for row in rows])


def write_outputs(directory, rows, checks, fast, seed, explained=()):
    """Write the chart and the report into ``directory`` (created if missing); without
    matplotlib, only the report, whose notes then say why there is no chart.

    Returns:
        the paths written, the report first.
    """
    directory.mkdir(parents=True, exist_ok=True)
    notes = list(explained)
    try:
        plot_report(rows, directory / CHART, explained)
        written = [directory / REPORT, directory / CHART]
    except ImportError as error:  # the base install has no matplotlib; the figures still count
        notes.append(f"no chart: {error}")
        print(f"note: {notes[-1]}")
        written = [directory / REPORT]
    write_report(directory / REPORT, rows, checks, notes, fast, seed)
    return written


def write_report(path, rows, checks, notes, fast, seed):
    """Write the JSON report atomically."""
    report = {
        "milestone": "mlperf", "year": 2018, "fast": fast, "seed": seed,
        "timer": "process CPU time (time.process_time)",
        "measurements": [dataclasses.asdict(row) for row in rows],
        "checks": [{"metric": c.metric, "value": c.value, "threshold": str(c.threshold),
                    "passed": c.passed} for c in checks],
        "notes": notes}
    text = json.dumps(report, indent=2, allow_nan=False)
    _write_atomically(path, lambda file: file.write(text.encode()))


def plot_report(rows, path, notes=()):
    """Draw the rows as a PNG at ``path`` (written atomically): one line of panels per model
    (quality, latency p50 with p90 marked, throughput, model size, peak memory), one bar per
    variant, and the ``notes`` below them.

    Raises:
        ImportError: matplotlib is not installed (``pip install 'ember[plot]'``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("the mlperf chart needs matplotlib: install ember[plot] "
                          "(pip install 'ember[plot]')") from error
    models = list(dict.fromkeys(row.model for row in rows))
    panels = (("quality", lambda row: next(iter(row.quality.values())), None),
              ("latency ms, p50 bar, p90 |", lambda row: row.latency_p50_ms, lambda row: row.latency_p90_ms),
              ("throughput", lambda row: row.throughput, None),
              ("model size (KB)", lambda row: row.model_bytes / 1024, None),
              ("peak memory (KB)", lambda row: row.peak_memory_bytes / 1024, None))
    # A bare Figure on the Agg canvas leaves pyplot and the user's backend untouched.
    figure = Figure(figsize=(18, 2.4 * len(models) + 0.8 + 0.2 * len(notes)), dpi=100)
    FigureCanvasAgg(figure)
    grid = figure.subplots(len(models), len(panels), squeeze=False)
    for axes_row, model in zip(grid, models):
        chosen = [row for row in rows if row.model == model]
        positions = np.arange(len(chosen))
        for axes, (title, value, whisker) in zip(axes_row, panels):
            values = [value(row) for row in chosen]
            axes.barh(positions, values, color=[f"C{i}" for i in range(len(chosen))])
            ends = values
            if whisker is not None:
                ends = [whisker(row) for row in chosen]
                axes.plot(ends, positions, "k|", markersize=14)
            for position, number, end in zip(positions, values, ends):
                text = f"{number:,.0f}" if number >= 100 else f"{number:.3g}"
                axes.annotate(text, (max(number, end), position), xytext=(4, 0),
                              textcoords="offset points", va="center", fontsize="small")
            axes.set_yticks(positions, [row.variant for row in chosen])
            axes.invert_yaxis()
            axes.margins(x=0.3)
            axes.grid(axis="x", alpha=0.3)
            label = next(iter(chosen[0].quality)) if title == "quality" else title
            if title == "throughput":
                label = chosen[0].throughput_unit
            axes.set_title(f"{model}: {label}", fontsize="medium")
    figure.suptitle("mlperf (2018): float32, int8 dynamic, 50% pruned, compiled, KV cache; process CPU time")
    footer = 0.04 * len(notes) / (1 + 0.1 * len(models))
    figure.tight_layout(rect=(0, footer, 1, 1))
    figure.text(0.01, 0.005, "\n".join(textwrap.shorten(note, 230) for note in notes), fontsize="small",
                va="bottom")
    _write_atomically(path, lambda file: figure.savefig(file, format="png"))


def milestone(out_dir=None):
    """The ``mlperf`` milestone, writing its report and chart into ``out_dir`` (default
    :func:`report_dir`)."""
    return Milestone(
        name="mlperf", year=2018,
        story="MLPerf: latency, throughput, bytes and memory of the ladder's models, "
              "quantized, pruned and KV-cached",
        thresholds=THRESHOLDS, train=functools.partial(train, out_dir=out_dir),
        accuracy_label="MLP, LeNet-5: test accuracy; GPT: training answers exact")


MILESTONE = milestone()
