"""Where the memory of a training step goes: :func:`memory_footprint` splits the bytes of live
tensor storage into parameters, buffers, gradients, optimizer state and activations.

The counts come from :mod:`ember._memory` (exact ``nbytes`` of each distinct storage, views
counted once); PyTorch has no such report, its closest relatives are ``torch.cuda.memory_summary``
and the memory columns of ``torch.profiler``.
"""
import dataclasses
import gc

from .. import _memory
from .._tensor import Tensor

__all__ = ["MemoryFootprint", "memory_footprint"]


@dataclasses.dataclass(frozen=True)
class MemoryFootprint:
    """Bytes of storage by role, as measured by :func:`memory_footprint`; ``str()`` prints a table.

    Attributes:
        parameters (int): distinct storage of ``model.parameters()``.
        buffers (int): distinct storage of ``model.buffers()`` (running statistics, masks).
        gradients (int): distinct storage of the parameters' ``.grad`` tensors.
        optimizer_state (int): distinct storage of every tensor in ``optimizer.state``.
        optimizer_state_by_name (dict[str, int]): the same split by state name (``exp_avg``,
            ``exp_avg_sq``, ``step``, ``momentum_buffer``, ...), summed over parameters.
        activations (int or None): storage the forward pass left alive for backward (the
            tensors the graph saved, and the output); None when no batch was run.
        peak (int or None): the most bytes of live tensor storage (everything in the process,
            not only this model) at any moment of the step; None when no batch was run.
    """
    parameters: int
    buffers: int
    gradients: int
    optimizer_state: int
    optimizer_state_by_name: dict
    activations: int = None
    peak: int = None

    @property
    def total(self):
        """parameters + buffers + gradients + optimizer state + activations (those measured)."""
        return (self.parameters + self.buffers + self.gradients + self.optimizer_state
                + (self.activations or 0))

    def __str__(self):
        rows = [("parameters", self.parameters), ("buffers", self.buffers),
                ("gradients", self.gradients), ("optimizer state", self.optimizer_state)]
        rows += [(f"  {name}", n) for name, n in self.optimizer_state_by_name.items()]
        rows += [("activations", self.activations), ("total", self.total),
                 ("peak during the step", self.peak)]
        lines = [f"{'category':<22}{'bytes':>14}"]
        for name, n in rows:
            lines.append(f"{name:<22}{'-' if n is None else f'{n:,}':>14}"
                         f"{'' if n is None else format_bytes(n):>12}")
        if self.parameters and self.optimizer_state:
            lines.append(f"optimizer state = {self.optimizer_state / self.parameters:.2f} x parameters")
        return "\n".join(line.rstrip() for line in lines)


def format_bytes(n):
    """``n`` bytes (int) in binary units for people.

        >>> format_bytes(812), format_bytes(4004000)
        ('812 B', '3.82 MiB')
    """
    if abs(n) < 1024:
        return f"{n} B"
    value, unit = n / 1024, "KiB"
    for bigger in ("MiB", "GiB", "TiB"):
        if abs(value) < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.2f} {unit}"


def memory_footprint(model, optimizer=None, batch=None):
    """The bytes one training step of ``model`` holds, by role.

    Without ``batch`` it measures the objects as they are (the gradients and optimizer state
    left by earlier steps; activations and peak are None). With ``batch`` it first runs one
    real step on them: ``out = model(*batch)``, ``out.sum().backward()`` (gradients take the
    same space whatever the loss), then ``optimizer.step()`` if an optimizer is given, so
    the parameters change and lazily created optimizer state exists, as after a training step.
    Activations are the bytes alive after the forward pass beyond those alive before it,
    which is what the graph saved for backward plus the output; the step's peak is
    measured without disturbing :func:`ember.max_memory_allocated`.

    Args:
        model (ember.nn.Module): the model.
        optimizer (ember.optim.Optimizer, optional): its optimizer.
        batch (Tensor or tuple of Tensors, optional): the model's positional inputs.

    Returns:
        MemoryFootprint: bytes (int) per role; ``str()`` gives a table with KiB/MiB.

    Raises:
        TypeError: the model's output is not a Tensor.
        RuntimeError: the output does not require grad (nothing to train), from ``backward``.

    Example::

        >>> import ember
        >>> model = ember.nn.Linear(1000, 1000)
        >>> report = memory_footprint(model, ember.optim.Adam(model.parameters()), ember.randn(8, 1000))
        >>> report.parameters, report.optimizer_state  # 1000*1000+1000 floats; Adam: 2 per weight + steps
        (4004000, 8008008)
    """
    activations = peak = None
    if batch is not None:
        activations, peak = _run_step(model, optimizer,
                                      tuple(batch) if isinstance(batch, (tuple, list)) else (batch,))
    # course:begin 20/memory-footprint
    # hint: bytes of the parameters, buffers, gradients and optimizer state (by state name) with
    # hint: _memory.storage_bytes (which counts shared storage once)
    params = list(model.parameters())
    by_name = {}
    if optimizer is not None:
        for state in optimizer.state.values():
            for name, value in state.items():
                by_name.setdefault(name, []).append(value)
    return MemoryFootprint(
        parameters=_memory.storage_bytes(params),
        buffers=_memory.storage_bytes(model.buffers()),
        gradients=_memory.storage_bytes(p.grad for p in params),
        optimizer_state=_memory.storage_bytes(v for values in by_name.values() for v in values),
        optimizer_state_by_name={name: _memory.storage_bytes(values) for name, values in by_name.items()},
        activations=activations, peak=peak)
    # course:end 20/memory-footprint


def _run_step(model, optimizer, inputs):
    # A cycle collection halfway through the forward pass would free unrelated garbage and
    # make the activations look smaller than they are.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with _memory.peak_scope():
            before = _memory.allocated()
            out = model(*inputs)
            activations = _memory.allocated() - before
            if not isinstance(out, Tensor):
                raise TypeError(f"memory_footprint needs a model that returns a Tensor, got "
                                f"{type(out).__name__}")
            out.sum().backward()
            del out
            if optimizer is not None:
                optimizer.step()
            peak = _memory.peak()
    finally:
        if collecting:
            gc.enable()
    return activations, peak
