"""The course: twenty modules in four tiers, in the order of ember's layers, so nothing is
used before it is built, the milestones each tier unlocks, and a twenty-first module on
distributed training.

A module's exercises are not listed here: they are the regions marked ``# course:begin NN/...``
in ember's own source (:mod:`ember.course.regions`), found by :func:`exercises`. Each exercise
is graded by the check of the same id in :mod:`ember.course.checks`.
"""
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import regions

__all__ = ["Module", "MODULES", "TIERS", "MILESTONE_REQUIREMENTS", "get", "exercises",
           "source_root", "Exercise"]


@dataclass(frozen=True)
class Module:
    """One course module: ``number`` ("04"), command-line ``slug``, ``title``, ``tier``, the
    systems ``question`` its guide answers with a measurement, and the guide's file name."""

    number: str
    slug: str
    title: str
    tier: str
    question: str

    @property
    def guide(self):
        return f"docs/course/{self.number}-{self.slug}.md"


TIERS = ("foundation", "architectures", "optimization", "capstone", "beyond one machine")

MODULES = {m.number: m for m in (
    Module("01", "tensor", "Tensors: storage, shape and strides", "foundation",
           "What does a view cost, and how many bytes does a batch of images take?"),
    Module("02", "ops", "Elementwise ops and broadcasting", "foundation",
           "What does broadcasting save over materialising the expanded operand?"),
    Module("03", "autograd", "Autograd: the tape and the backward pass", "foundation",
           "How much memory does the tape keep alive for backward?"),
    Module("04", "modules", "Modules and parameters", "foundation",
           "How many parameters and bytes does an MLP hold?"),
    Module("05", "activations-losses", "Activations and losses", "foundation",
           "Why is log_softmax computed with the max subtracted?"),
    Module("06", "optimizers", "Optimizers", "foundation",
           "Why does Adam triple the memory of the parameters it trains?"),
    Module("07", "data", "Data loading", "foundation",
           "What does a batch cost to assemble, and when do worker processes pay?"),
    Module("08", "training", "The training loop", "foundation",
           "Where does the time of one training step go?"),
    Module("09", "convolutions", "Convolutions and im2col", "architectures",
           "Why does im2col turn a convolution into one matrix product, and at what memory?"),
    Module("10", "normalization", "Normalization", "architectures",
           "What do batch statistics cost at inference, and why does layer norm not need them?"),
    Module("11", "tokenization", "Tokenization and embeddings", "architectures",
           "How many tokens does BPE save over characters on the bundled corpus?"),
    Module("12", "attention", "Attention", "architectures",
           "How do attention's time and memory grow with the sequence length?"),
    Module("13", "transformers", "Transformers", "architectures",
           "Where do a GPT block's parameters and FLOPs go?"),
    Module("14", "profiling", "Profiling", "optimization",
           "How many FLOPs does a training step take, and how close to peak does it run?"),
    Module("15", "quantization", "Quantization", "optimization",
           "How many bytes does int8 save, and what accuracy does it cost?"),
    Module("16", "pruning", "Pruning", "optimization",
           "Why does unstructured pruning save neither bytes nor time in dense storage?"),
    Module("17", "kv-cache", "The KV cache", "optimization",
           "What does caching keys and values buy per generated token?"),
    Module("18", "acceleration", "Acceleration", "optimization",
           "What does fusing elementwise ops save in memory traffic?"),
    Module("19", "benchmarking", "Benchmarking", "optimization",
           "How many repeats does a trustworthy timing need, and what is its spread?"),
    Module("20", "capstone", "Capstone", "capstone",
           "Can your framework train the ladder's models to the milestones' thresholds?"),
    Module("21", "distributed", "Distributed data parallel", "beyond one machine",
           "What does averaging gradients across ranks cost per step, and how does each rank get its share?"),
)}

# A milestone runs on the student's code once every module it needs has passed.
MILESTONE_REQUIREMENTS = {
    "perceptron": ("01", "02", "03"),
    "xor": ("01", "02", "03", "04", "05"),
    "backprop": ("01", "02", "03", "04", "05", "06", "07", "08"),
    "lenet": ("01", "02", "03", "04", "05", "06", "07", "08", "09"),
    "transformer": ("01", "02", "03", "04", "05", "06", "07", "08", "10", "11", "12", "13"),
    "mlperf": tuple(f"{n:02d}" for n in range(1, 20)),
}


def get(number):
    """The module numbered ``number`` ("4", "04" or 4).

    Raises:
        KeyError: no such module; the message lists the valid numbers.
    """
    key = f"{int(number):02d}" if str(number).isdigit() else str(number)
    try:
        return MODULES[key]
    except KeyError:
        raise KeyError(f"unknown course module {number!r}; modules are 01 to {max(MODULES)} "
                       f"('ember course list')") from None


def source_root():
    """The folder holding the ``ember`` package whose source the exercises come from."""
    return Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Exercise:
    """One marked region: its ``id`` ("04/linear-forward"), the ember module that holds it
    (``ember.nn.modules.linear``) and that module's file relative to the package's parent."""

    id: str
    module_name: str
    relpath: str

    @property
    def number(self):
        return self.id[:2]


@lru_cache(maxsize=None)
def _all_exercises(root):
    found = []
    base = Path(root).parent
    for dirpath, dirnames, filenames in os.walk(root):
        # The course's own files only show markers in their documentation.
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and
                             not (Path(dirpath) == Path(root) and d == "course"))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = Path(dirpath) / name
            text = path.read_text(encoding="utf-8")
            if "# course:begin" not in text:
                continue
            rel = path.relative_to(base)
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            module_name = ".".join(parts)
            found += [Exercise(r.id, module_name, rel.as_posix()) for r in regions.find(text, str(path))]
    return tuple(sorted(set(found), key=lambda e: e.id))  # an exercise's parts are one exercise


def exercises(number=None):
    """The exercises of module ``number`` (all modules when None), sorted by id."""
    every = _all_exercises(str(source_root()))
    return [e for e in every if number is None or e.number == get(number).number]
