"""Loss reductions, as in ``torch/nn/_reduction.py``: the ``reduction`` argument
('mean' | 'sum' | 'none') and the deprecated ``size_average``/``reduce`` flags it replaced."""
import warnings


def legacy_reduction(size_average, reduce, reduction):
    """The ``reduction`` that the deprecated ``size_average``/``reduce`` flags stand for
    (``reduction`` itself when both are None), with PyTorch's deprecation warning."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{result}' instead.")
    return result


def check_reduction(reduction):
    """ValueError unless ``reduction`` is 'mean', 'sum' or 'none'."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def reduce_loss(loss, reduction):
    """``loss`` reduced by its mean, its sum, or not at all ('none'); ValueError otherwise."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")
