"""The milestone ladder: landmark results of neural-network history, re-run on ember.

Each milestone trains a small model the way its paper did (or the way a PyTorch user would
today, where that is what reproduces the result), checks the result against thresholds, and
can plot its curves. The ladder climbs in order: a single unit learns a line (1958), a single
layer cannot learn XOR (1969), backpropagation trains hidden layers (1986), a
convolutional network, LeNet-5, reads handwritten digits (1998; ``lenet.milestone(data_dir)``
runs it on MNIST or CIFAR-10 files instead), and attention learns to route information while
a tiny GPT learns to answer questions (2017; ``transformer.milestone(out_dir)`` saves the
GPT elsewhere than ``~/.cache/ember/transformer``), LeNet trained data-parallel on 4 ranks
survives losing one (after Goyal et al. 2017; ``ddp.milestone(out_dir)`` keeps its result
and flight-recorder dumps in ``out_dir``), and MLPerf asks what those models cost
to run, as trained, quantized to int8, pruned and with the GPT's KV cache (2018;
``mlperf.milestone(out_dir)`` writes its report elsewhere than ``~/.cache/ember/mlperf``).

    >>> from ember import milestones
    >>> [m.name for m in milestones.MILESTONES.values()]
    ['perceptron', 'xor', 'backprop', 'lenet', 'transformer', 'ddp', 'mlperf']

Run one with ``milestones.get("xor").run(fast=True)``, or from the shell with
``ember milestones run xor``.
"""
from . import backprop, ddp, lenet, mlperf, perceptron, transformer, xor
from .milestone import Check, History, Milestone, Result, Threshold

MILESTONES = {m.name: m for m in (perceptron.MILESTONE, xor.MILESTONE, backprop.MILESTONE,
                                  lenet.MILESTONE, transformer.MILESTONE, ddp.MILESTONE,
                                  mlperf.MILESTONE)}


def get(name):
    """The milestone called ``name``.

    Raises:
        KeyError: no milestone has that name; the message lists the valid names.
    """
    try:
        return MILESTONES[name]
    except KeyError:
        raise KeyError(f"unknown milestone {name!r}; valid names: {', '.join(MILESTONES)}") from None


__all__ = ["Check", "History", "MILESTONES", "Milestone", "Result", "Threshold", "get"]
