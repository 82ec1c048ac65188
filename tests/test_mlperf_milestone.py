"""The 2018 ``mlperf`` milestone: a fast run meets its thresholds and writes a JSON report and a
PNG chart whose figures hold closed-form values (parameter counts, bytes, sparsity); helpers."""
import contextlib
import dataclasses
import io
import json

import numpy as np
import pytest

import ember
from ember import milestones, nn
from ember.ao.nn.quantized.dynamic import Linear as DynamicQuantizedLinear
from ember.cli import main
from ember.milestones import mlperf
from ember.models.gpt import GPT, GPTConfig

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The digits MLP 64-128-64-10: weights and biases.
MLP_WEIGHTS = 64 * 128 + 128 * 64 + 64 * 10
MLP_PARAMETERS = MLP_WEIGHTS + 128 + 64 + 10


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The milestone run once with fast settings: (result, printed text, report dir)."""
    directory = tmp_path_factory.mktemp("mlperf") / "report"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = mlperf.milestone(out_dir=directory).run(fast=True, quiet=True)
    return result, printed.getvalue(), directory


@pytest.fixture(scope="module")
def report(run):
    _, _, directory = run
    return json.loads((directory / mlperf.REPORT).read_text())


def rows_of(report):
    return {(row["model"], row["variant"]): row for row in report["measurements"]}


def test_fast_run_meets_the_thresholds(run):
    result, _, _ = run
    metrics = result.metrics
    assert metrics["MLP int8 accuracy drop (points)"] <= 2.0
    assert 0.2 < metrics["MLP int8 bytes / float32 bytes"] <= 0.30
    assert metrics["GPT KV-cache speedup at 256 tokens"] >= 3.0
    assert result.passed
    assert set(result.histories) == {"MLP (test accuracy)", "LeNet-5 (test accuracy)",
                                     "GPT (training answers exact)"}


def test_report_has_every_model_and_variant_with_its_checks(run, report):
    result, _, directory = run
    assert sorted(path.name for path in directory.iterdir()) == [mlperf.REPORT, mlperf.CHART]
    assert list(rows_of(report)) == [
        ("MLP", "float32"), ("MLP", "int8 dynamic"), ("MLP", "50% pruned"), ("MLP", "compiled"), ("MLP", "torch eager"),
        ("LeNet-5", "float32"), ("LeNet-5", "int8 dynamic"), ("LeNet-5", "50% pruned"), ("LeNet-5", "compiled"),
        ("LeNet-5", "torch eager"),
        ("GPT", "float32"), ("GPT", "int8 dynamic"), ("GPT", "50% pruned"), ("GPT", "no KV cache"),
        ("GPT", "compiled"), ("GPT", "torch eager")]
    assert report["fast"] is True and report["milestone"] == "mlperf"
    assert [(c["metric"], c["passed"]) for c in report["checks"]] == [
        (check.metric, True) for check in result.checks]
    assert [c["value"] for c in report["checks"]] == pytest.approx(list(result.metrics.values()))
    for row in report["measurements"]:
        assert 0 < row["latency_p50_ms"] <= row["latency_p90_ms"]
        assert row["throughput"] > 0


def test_sizes_are_the_closed_form_counts(report):
    rows = rows_of(report)
    mlp, int8, pruned = (rows["MLP", v] for v in ("float32", "int8 dynamic", "50% pruned"))
    assert mlp["parameters"] == pruned["parameters"] == MLP_PARAMETERS
    assert mlp["model_bytes"] == pruned["model_bytes"] == 4 * MLP_PARAMETERS
    # int8 weights, float32 biases, and per layer a float64 scale and an int64 zero point.
    assert int8["model_bytes"] == MLP_WEIGHTS + 4 * (MLP_PARAMETERS - MLP_WEIGHTS) + 3 * 16
    assert round(pruned["sparsity"] * MLP_PARAMETERS) == MLP_WEIGHTS // 2
    assert mlp["sparsity"] == 0
    # sparse storage (values + a bit per element) is what pruning would save; unpruned: nothing
    assert mlp["sparse_bytes"] == mlp["model_bytes"]
    assert 4 * MLP_WEIGHTS // 2 + MLP_WEIGHTS // 8 <= pruned["sparse_bytes"] < 0.6 * pruned["model_bytes"]
    # Peak tensor memory of the 360 test digits in one batch: a 128-wide hidden layer's
    # activations before and after tanh, both alive at once (float32).
    assert mlp["peak_memory_bytes"] == 2 * 360 * 128 * 4
    lenet_float = rows["LeNet-5", "float32"]
    assert lenet_float["parameters"] == 61706  # LeNet-5's count on one input channel
    lenet_biases = 6 + 16 + 120 + 84 + 10
    assert round(rows["LeNet-5", "50% pruned"]["sparsity"] * 61706) == (61706 - lenet_biases) // 2
    gpt = rows["GPT", "float32"]
    assert gpt["model_bytes"] == 4 * gpt["parameters"]  # the tied lm_head counted once
    assert rows["GPT", "no KV cache"]["model_bytes"] == gpt["model_bytes"]
    assert rows["GPT", "int8 dynamic"]["model_bytes"] < gpt["model_bytes"] / 2


def test_quality_is_honest_about_each_variant(run, report):
    rows = rows_of(report)
    result, _, _ = run
    assert rows["MLP", "float32"]["quality"]["accuracy"] == pytest.approx(
        result.histories["MLP (test accuracy)"].accuracy[-1])
    assert rows["GPT", "no KV cache"]["quality"] == rows["GPT", "float32"]["quality"]
    assert rows["GPT", "50% pruned"]["quality"]["loss"] != rows["GPT", "float32"]["quality"]["loss"]
    for model in ("MLP", "LeNet-5"):  # the compiled model and PyTorch compute the same predictions
        for same in ("compiled", "torch eager"):
            assert rows[model, same]["quality"]["accuracy"] == pytest.approx(
                rows[model, "float32"]["quality"]["accuracy"], abs=0.002)
    for model in ("MLP", "LeNet-5", "GPT"):
        assert rows[model, "compiled"]["compile_seconds"] > 0
        assert rows[model, "float32"]["compile_seconds"] is None
    for model in ("MLP", "LeNet-5", "GPT"):
        # Pruning zeroes weights without shrinking the dense tensors.
        assert rows[model, "50% pruned"]["model_bytes"] == rows[model, "float32"]["model_bytes"]


def test_chart_is_a_png_and_the_table_is_printed(run):
    _, printed, directory = run
    chart = (directory / mlperf.CHART).read_bytes()
    assert chart.startswith(PNG_SIGNATURE)
    width, height = int.from_bytes(chart[16:20], "big"), int.from_bytes(chart[20:24], "big")
    assert width >= 1000 and height >= 600
    lines = printed.splitlines()
    assert lines[0] == "mlperf: fast run: no torch.compile rows (inductor compiles for 10-60 s)"
    assert lines[1].split()[:4] == ["model", "variant", "quality", "p50"]
    assert sum(line.startswith(("MLP ", "LeNet-5 ", "GPT ")) for line in lines) == 16
    assert f"wrote {directory / mlperf.REPORT}" in printed
    notes = [line for line in lines if line.startswith("note: ")]
    assert [note.split(":")[1].strip() for note in notes] == ["int8 dynamic", "50% pruned", "GPT quality",
                                                              "KV cache, same lengths with and without it",
                                                              "compiled", "MLP in PyTorch, the same weights on one thread",
                                                              "LeNet-5 in PyTorch, the same weights on one thread",
                                                              "GPT in PyTorch, the same weights on one thread"]
    assert "reference kernel that dequantizes" in notes[0] and "bytes instead of" in notes[1]
    assert "tokens/s" in notes[3] and "samples/s" in notes[4] and "GPT" in notes[4] and "tokens/s" in notes[4]


def test_size_figures_count_a_tied_weight_once():
    ember.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=8))
    parameters, model_bytes, sparse_bytes, sparsity = mlperf.size_figures(model)
    assert parameters == sum(p.numel() for p in model.parameters())
    assert len(model.state_dict()) == len(mlperf.state_tensors(model)) + 1
    assert model_bytes == 4 * parameters and sparse_bytes <= model_bytes
    zeros = sum(int((p == 0).sum().item()) for p in model.parameters())  # the biases start at 0
    assert zeros > 0 and sparsity == zeros / parameters


def test_pruned_and_quantized_parts_leave_the_rest_alone():
    ember.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=8))
    pruned = mlperf.pruned(model, nn.Linear, part="blocks")
    weights = [m.weight for m in pruned.blocks.modules() if isinstance(m, nn.Linear)]
    zeros = sum(int((w == 0).sum().item()) for w in weights)
    assert zeros == sum(w.numel() for w in weights) // 2
    assert pruned.lm_head.weight is pruned.token_embedding.weight
    assert ember.equal(pruned.lm_head.weight, model.lm_head.weight)
    assert int((model.blocks[0].mlp.fc.weight == 0).sum().item()) == 0  # the original is intact
    quantized = mlperf.quantized(model, part="blocks")
    assert type(quantized.lm_head) is nn.Linear
    assert isinstance(quantized.blocks[0].mlp.fc, DynamicQuantizedLinear)
    assert type(model.blocks[0].mlp.fc) is nn.Linear
    out = quantized.generate(ember.tensor([[1, 2]]), 3, top_k=1)
    assert tuple(out.shape) == (1, 5)


def test_without_matplotlib_the_report_is_written_and_says_why(tmp_path, monkeypatch, capsys):
    def no_matplotlib(rows, path, notes=()):
        raise ImportError("the mlperf chart needs matplotlib")
    monkeypatch.setattr(mlperf, "plot_report", no_matplotlib)
    row = mlperf.Measurement("MLP", mlperf.FLOAT, {"accuracy": 0.9}, 1.0, 2.0, 10.0, "samples/s",
                             10, 40, 40, 100, 0.0)
    check = milestones.Check(mlperf.THRESHOLDS[0], 2.5)
    written = mlperf.write_outputs(tmp_path / "out", [row], [check], fast=True, seed=0)
    assert written == [tmp_path / "out" / mlperf.REPORT]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [mlperf.REPORT]  # no temp files
    report = json.loads(written[0].read_text())
    assert report["notes"] == ["no chart: the mlperf chart needs matplotlib"]
    assert report["checks"] == [{"metric": check.metric, "value": 2.5, "threshold": "<= 2.00",
                                 "passed": False}]
    assert report["measurements"] == [dataclasses.asdict(row)]
    assert "note: no chart" in capsys.readouterr().out


def test_cpu_times_are_one_per_call():
    times = mlperf.cpu_times(lambda i: sum(range(1000 * (i + 1))), 5)
    assert times.shape == (5,) and (times >= 0).all()
    seconds, peak = mlperf.fastest_and_peak(lambda: ember.zeros(1000), 3)
    assert seconds >= 0 and peak == 4000


def test_registered_after_transformer_and_listed():
    ladder = list(milestones.MILESTONES)
    assert ladder[-1] == "mlperf" and ladder.index("transformer") < ladder.index("mlperf")
    assert milestones.get("mlperf").year == 2018
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["milestones", "list"]) == 0
    assert "mlperf       2018" in out.getvalue()


def test_torch_rows_hold_the_same_layers_and_weights():
    """The PyTorch copy of a trained model computes its outputs (LeNet-5: Conv2d, MaxPool2d,
    Flatten, Linear, ReLU rebuilt from their attributes); torch.compile wraps the same copy."""
    torch = pytest.importorskip("torch")
    from ember.milestones.lenet import lenet5
    ember.manual_seed(0)
    net = lenet5().eval()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        variants = mlperf.in_torch(compile_too=True)(net)
    assert list(variants) == ["torch eager", "torch.compile"] and printed.getvalue() == ""
    eager, compiled = variants.values()
    assert isinstance(compiled.model, torch._dynamo.eval_frame.OptimizedModule)
    assert compiled.model._orig_mod is eager.model
    assert [type(m).__name__ for m in eager.model] == [type(m).__name__ for m in net]
    x = ember.randn(3, 1, 32, 32)
    with ember.no_grad():
        want = net(x).numpy()
    np.testing.assert_allclose(eager(x).numpy(), want, rtol=1e-4, atol=1e-5)
