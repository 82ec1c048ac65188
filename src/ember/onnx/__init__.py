"""``ember.onnx``: present so programs that import it run; exporting is not supported.

ember records no graph that an ONNX exporter could read, so :func:`export` raises when called
(not at import time, so a training script that imports ``torch.onnx`` at the top still runs).
"""
__all__ = ["export", "is_in_onnx_export", "OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """Raised by :func:`export` (``torch.onnx.OnnxExporterError``)."""


def export(model, args=(), f=None, *unused_args, **unused_kwargs):
    """Would write ``model`` as an ONNX graph; ember does not support it.

    Raises:
        OnnxExporterError (a RuntimeError): always.
    """
    raise OnnxExporterError(f"ember.onnx.export is not supported: ember records no graph to "
                            f"export {type(model).__name__} to ONNX; export it with PyTorch instead")


def is_in_onnx_export():
    """False: ember never runs an ONNX export."""
    return False
