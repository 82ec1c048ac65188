"""``SummaryWriter``: scalars, histograms, images and text as TensorBoard events, in the event
files (``events.out.tfevents.*``) TensorBoard reads, through the ``tensorboard`` package's own
writer and protocol buffers, with the records PyTorch's writer makes for the same calls.

Graphs, embeddings, hyperparameter tables, audio, video and figures are not written (ember has
no TorchScript graph to export); ``add_graph`` warns and returns, the others raise
NotImplementedError naming themselves.
"""
import io
import os
import socket
import time
import warnings
from datetime import datetime

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ..._tensor import Tensor

__all__ = ["SummaryWriter"]


def _array(value):
    """A NumPy array of a tensor (detached), an array, or a number."""
    if isinstance(value, Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def _tensorflow_bins():
    """TensorFlow's default histogram edges: +-1e-12 growing by 10% to 1e20, and 0."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


_DEFAULT_BINS = _tensorflow_bins()


def _histogram(values, bins, max_bins=None):
    """The HistogramProto of ``values``: counts between the edges, cut to the buckets from the
    first to the last non-empty one (with one empty bucket before it, as TensorFlow writes)."""
    values = values.reshape(-1).astype(float)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        factor = -(-len(counts) // max_bins)
        counts = np.pad(counts, (0, factor * max_bins - len(counts))).reshape(-1, factor).sum(-1)
        limits = np.concatenate([limits[:-1:factor], limits[-1:]])
    filled = np.flatnonzero(counts)
    first, last = (int(filled[0]), int(filled[-1])) if filled.size else (0, len(counts) - 1)
    counts = np.concatenate([[0], counts[:last + 1]]) if first == 0 else counts[first - 1:last + 1]
    limits = limits[first:last + 2]
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def _to_hwc(image, dataformats):
    """An image array in ``dataformats`` (``CHW``, ``HWC``, ``HW``, ``NCHW``...) as HWC with 3
    or 4 channels (grey repeated; a batch tiled into a grid)."""
    dataformats = dataformats.upper()
    if image.ndim != len(dataformats):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: "
                             f"{image.shape}, input_format: {dataformats}")
    if dataformats.startswith("N"):
        batch = image.transpose([dataformats.index(c) for c in "NCHW" if c in dataformats])
        if batch.ndim == 3:
            batch = batch[:, None]
        image, dataformats = _grid(batch), "CHW"
    image = image.transpose([dataformats.index(c) for c in "HWC" if c in dataformats])
    if image.ndim == 2:
        image = image[:, :, None]
    return np.repeat(image, 3, 2) if image.shape[2] == 1 else image


def _grid(batch, columns=8):
    """NCHW images tiled into one CHW image, ``columns`` across."""
    n, c, h, w = batch.shape
    if c == 1:
        batch, c = np.repeat(batch, 3, 1), 3
    columns = min(n, columns)
    rows = -(-n // columns)
    canvas = np.zeros((c, rows * h, columns * w), batch.dtype)
    for i in range(n):
        r, q = divmod(i, columns)
        canvas[:, r * h:(r + 1) * h, q * w:(q + 1) * w] = batch[i]
    return canvas


def _image(image, rescale=1):
    from PIL import Image  # Pillow comes with tensorboard
    height, width, channels = image.shape
    picture = Image.fromarray(image)
    if rescale != 1:
        picture = picture.resize((int(width * rescale), int(height * rescale)), Image.LANCZOS)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return Summary.Image(height=int(height * rescale), width=int(width * rescale), colorspace=channels,
                         encoded_image_string=buffer.getvalue())


class SummaryWriter:
    """Writes TensorBoard event files under ``log_dir`` (default
    ``runs/<date>_<host><comment>``). Use as a context manager or call ``close()``; events are
    flushed every ``flush_secs`` seconds or ``max_queue`` events."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir, self.purge_step = log_dir, purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self._writer = None
        self._scalar_writers = {}
        self._file_writer()

    def _file_writer(self):
        if self._writer is None:
            self._writer = EventFileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            if self.purge_step is not None:  # TensorBoard drops the earlier run's events from this step on
                self._writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.purge_step = None
        return self._writer

    def get_logdir(self):
        """The directory the event files are written to."""
        return self.log_dir

    def _add(self, summary, global_step, walltime, writer=None):
        event = Event(summary=summary, wall_time=time.time() if walltime is None else walltime)
        if global_step is not None:
            event.step = int(global_step)
        (writer or self._file_writer()).add_event(event)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One number (a Python number, a NumPy scalar or a one-element tensor) at ``global_step``."""
        value = _array(scalar_value).squeeze()
        if value.ndim != 0:
            raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: "
                                 f"{value.size} and {value.ndim} dimensions.")
        if new_style:
            raise NotImplementedError("add_scalar(new_style=True) is not supported by ember's SummaryWriter")
        self._add(Summary(value=[Summary.Value(tag=tag, simple_value=float(value))]), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several numbers on one chart: each goes to its own run directory
        ``<log_dir>/<main_tag>_<tag>`` under the tag ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        for tag, scalar_value in tag_scalar_dict.items():
            directory = self.log_dir + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self._scalar_writers.get(directory)
            if writer is None:
                writer = self._scalar_writers[directory] = EventFileWriter(
                    directory, self.max_queue, self.flush_secs, self.filename_suffix)
            value = float(_array(scalar_value).squeeze())
            self._add(Summary(value=[Summary.Value(tag=main_tag, simple_value=value)]), global_step, walltime, writer)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """The distribution of ``values``; ``bins`` as NumPy's (a count, edges or a rule name)
        or ``"tensorflow"`` (TensorFlow's exponential default edges)."""
        bins = _DEFAULT_BINS if isinstance(bins, str) and bins == "tensorflow" else bins
        histogram = _histogram(_array(values), bins, max_bins)
        self._add(Summary(value=[Summary.Value(tag=tag, histo=histogram)]), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image: uint8 values as they are, floating values in [0, 1] scaled to 0..255."""
        image = _array(img_tensor)
        scale = 1 if image.dtype == np.uint8 else 255
        image = _to_hwc(image, dataformats)
        image = np.clip(image.astype(np.float32) * scale, 0, 255).astype(np.uint8)
        self._add(Summary(value=[Summary.Value(tag=tag, image=_image(image))]), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images, tiled into one."""
        self.add_image(tag, img_tensor, global_step, walltime, dataformats)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Markdown text, shown in TensorBoard's text tab under ``<tag>/text_summary``."""
        metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
        tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        value = Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=tensor)
        self._add(Summary(value=[value]), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Does nothing but warn: ember has no TorchScript trace to export (``ember.compile``'s
        ``EMBER_LOGS=graph`` prints the captured graph instead)."""
        warnings.warn("ember's SummaryWriter does not write model graphs; add_graph does nothing "
                      "(EMBER_LOGS=graph prints a compiled model's graph)", UserWarning, stacklevel=2)

    def _not_written(self, name):
        def refuse(*args, **kwargs):
            raise NotImplementedError(f"SummaryWriter.{name} is not supported by ember (scalars, histograms, "
                                      "images and text are)")
        return refuse

    def __getattr__(self, name):
        if name in ("add_hparams", "add_embedding", "add_audio", "add_video", "add_figure", "add_pr_curve",
                    "add_mesh", "add_custom_scalars", "add_image_with_boxes", "add_tensor"):
            return self._not_written(name)
        raise AttributeError(f"'SummaryWriter' object has no attribute '{name}'")

    def flush(self):
        """Writes every pending event to disk."""
        for writer in [self._writer, *self._scalar_writers.values()]:
            if writer is not None:
                writer.flush()

    def close(self):
        """Flushes and closes the event files; a later call reopens them."""
        for writer in [self._writer, *self._scalar_writers.values()]:
            if writer is not None:
                writer.flush()
                writer.close()
        self._writer, self._scalar_writers = None, {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
