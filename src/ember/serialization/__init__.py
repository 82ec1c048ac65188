"""``ember.save`` and ``ember.load``: PyTorch's checkpoint format, both ways
(https://pytorch.org/docs/stable/notes/serialization.html).

``ember.save`` writes what ``torch.save`` writes, so ``torch.load(path, weights_only=True)``
reads ember's checkpoints, and ``ember.load`` reads ``torch.save``'s: state_dicts, optimizer
states and whole checkpoints move between the two frameworks. Loading is safe by default
(``weights_only=True``): only tensors, containers and plain values are built, and any other
global named by the file is refused with ``pickle.UnpicklingError`` before it is constructed
(allow more with :func:`add_safe_globals`). ``weights_only=False`` unpickles anything, such as
a whole module, and runs code from the file: use it only for files you trust.
Files written by ember 0.1 (``archive/ember.json``, no pickle) still load. The format and its
checks are described in ``_torch_format.py``, ``_files.py`` and ``_legacy.py``.
"""
import io
import os
import pickle
import sys
import warnings
import zipfile

import numpy as np

from ._files import open_archive, write_atomically, write_atomically as _write_atomically  # noqa: F401
from ._legacy import INDEX as _LEGACY_INDEX, Decoder as _LegacyDecoder
from ._torch_format import (_Rebuilder, add_safe_globals, clear_safe_globals, dump, get_safe_globals,
                            safe_globals, unpickle)

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

DEFAULT_PROTOCOL = 2
_ALIGNMENT = 64  # storages start at multiples of 64 bytes in the file, as torch writes them


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves ``obj`` to ``f`` in PyTorch's checkpoint format (``torch.save``).

    Args:
        obj: anything ``pickle`` can save: tensors and Parameters (stored as raw bytes, tensors
            that share memory share a storage as in PyTorch), ``state_dict``s, optimizer states,
            dicts, lists, sets, numbers (complex included), strings, bytes, NumPy arrays and
            scalars, ``pathlib.Path``, ``argparse.Namespace``, and whole modules (pickled by
            reference to their class, so loading needs the same code importable).
        f: a path (``str`` or ``os.PathLike``) or a binary file-like object with ``write``.
        pickle_module: only the standard ``pickle`` is supported.
        pickle_protocol: the pickle protocol of ``data.pkl`` (2, as torch, by default).

    The file is a zip archive in PyTorch's documented layout (``archive/data.pkl``,
    ``archive/data/N`` per storage, ``archive/version``, ``archive/byteorder``), so
    ``torch.load(f, weights_only=True)`` reads it. Tensors keep their shape, strides, dtype
    and ``requires_grad``; storages hold the machine's bytes, its byte order recorded.

    A path is written to ``.NAME.ember-tmp-PID-RANDOM`` beside it, flushed, then renamed over
    ``f`` in one step, so a crash never leaves a partly written checkpoint under ``f``; stale
    temporary files of killed earlier saves of ``f`` are removed.

    Raises:
        RuntimeError: the parent directory of a path ``f`` does not exist.
        ValueError: ``obj`` is nested too deeply; ``pickle_module`` is not ``pickle``;
            ``_use_new_zipfile_serialization=False``.
        TypeError, pickle.PicklingError, AttributeError: pickle's error naming what cannot be
            pickled, such as a lambda.

    Nothing is written when an error is raised.

    Source: https://pytorch.org/docs/stable/generated/torch.save.html

    Example::

        >>> import io, ember
        >>> buffer = io.BytesIO()
        >>> ember.save({"w": ember.ones(2)}, buffer)
        >>> _ = buffer.seek(0)
        >>> ember.load(buffer)["w"]
        tensor([1., 1.])
    """
    if pickle_module is not pickle:
        raise ValueError(f"ember.save: pickle_module must be the standard pickle module, got {pickle_module!r}")
    if not _use_new_zipfile_serialization:
        raise ValueError("ember.save writes only the zip format; _use_new_zipfile_serialization=False "
                         "(the format of torch < 1.6) is not supported")
    data, storages = dump(obj, pickle_protocol)

    def write(fh):
        _write_archive(fh, data, storages, not _disable_byteorder_record)
    if isinstance(f, (str, os.PathLike)):
        write_atomically(os.fspath(f), write)
    else:
        write(f)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, allow_compressed=False,
         **pickle_load_args):
    """Loads an object saved by ``ember.save`` or ``torch.save`` from ``f`` (``torch.load``).

    Args:
        f: a path or a binary file-like object.
        map_location: where tensors go: None, a device or string, a dict from saved location
            to wanted one (``{"cuda:0": "cpu"}``), or a callable ``(storage, location)``
            returning the storage to use (a 1-D tensor) or None. ember computes on the CPU,
            so tensors saved on a GPU need ``map_location="cpu"``.
        weights_only: True (the default, as in PyTorch 2.6+): only tensors, containers, plain
            values and :func:`get_safe_globals` are constructed. False: unpickle anything,
            including whole modules; the file can run code, so only for trusted files. PyTorch
            module classes in such a file load as ember's classes of the same path.
        mmap: accepted for PyTorch compatibility; storages are read into memory.
        allow_compressed: ember and PyTorch never compress checkpoint entries, and a small
            compressed file can expand to gigabytes, so compressed entries are refused unless
            this is True.
        pickle_load_args: passed to the unpickler when ``weights_only=False`` (``encoding``).

    Raises:
        pickle.UnpicklingError: with ``weights_only``, a global that is not allowed (the message
            names it and how to allow it), or a malformed pickle.
        RuntimeError: a file that is not a checkpoint, is truncated or corrupt, describes a
            tensor outside its storage, holds a dtype ember lacks (float8, complex32, quantized), has
            compressed entries, nests containers deeper than any save can write, or holds
            tensors on a device the ``map_location`` does not bring to the CPU.
        FileNotFoundError: a path ``f`` that does not exist.

    Returns:
        the saved object, rebuilt: tensors with their saved shape, strides, dtype and
        ``requires_grad`` (tensors that shared a storage share one again), containers and
        values as saved.

    Source: https://pytorch.org/docs/stable/generated/torch.load.html

    Example::

        >>> import datetime, io, pickle, ember
        >>> from ember import nn
        >>> buffer = io.BytesIO()
        >>> ember.save({"model": nn.Linear(2, 1).state_dict(), "epoch": 3}, buffer)
        >>> _ = buffer.seek(0)
        >>> checkpoint = ember.load(buffer)
        >>> checkpoint["epoch"], checkpoint["model"]["weight"].shape
        (3, torch.Size([1, 2]))
        >>> nn.Linear(2, 1).load_state_dict(checkpoint["model"])
        <All keys matched successfully>
        >>> buffer = io.BytesIO()
        >>> ember.save({"when": datetime.date(2026, 12, 1)}, buffer)
        >>> _ = buffer.seek(0)
        >>> try:                 # a class that is not allowed is refused, never constructed
        ...     ember.load(buffer)
        ... except pickle.UnpicklingError as error:
        ...     print("GLOBAL datetime.date was not an allowed global" in str(error))
        True
        >>> _ = buffer.seek(0)
        >>> with ember.serialization.safe_globals([datetime.date]):   # trusted: allow it
        ...     ember.load(buffer)
        {'when': datetime.date(2026, 12, 1)}
    """
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if weights_only and pickle_load_args:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
        pickle_load_args = {}
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "the file")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_archive(open_archive(fh, name, allow_compressed), name, map_location, weights_only,
                                 pickle_load_args)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_archive(open_archive(f, name, allow_compressed), name, map_location, weights_only,
                         pickle_load_args)


def _load_archive(archive, name, map_location, weights_only, pickle_load_args):
    names = archive.namelist()
    if _LEGACY_INDEX in names:
        return _LegacyDecoder(archive, name, map_location).decode()
    pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pickles) != 1:
        raise RuntimeError(f"ember.load: {name} is not a PyTorch or ember checkpoint: it has no single "
                           f"<folder>/data.pkl or archive/ember.json")
    prefix = pickles[0][:-len("/data.pkl")]
    byteorder = _read(archive, f"{prefix}/byteorder", name, default=b"little").decode("ascii", "replace")
    if byteorder not in ("little", "big"):
        raise RuntimeError(f"ember.load: {name} has an unknown byte order {byteorder!r:.40}")
    rebuilder = _Rebuilder(archive, prefix, name, map_location, byteorder)
    return unpickle(_read(archive, pickles[0], name), rebuilder, weights_only, **pickle_load_args)


def _read(archive, member, name, default=None):
    try:
        return archive.read(member)
    except KeyError:
        if default is not None:
            return default
        raise RuntimeError(f"ember.load: {name} has no {member}") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise RuntimeError(f"ember.load: {name} is truncated or corrupt: cannot read {member} ({e})") from None


def _write_archive(fh, data, storages, record_byteorder):
    """The zip archive torch writes: uncompressed entries, storages aligned to 64 bytes."""
    start = fh.tell() if getattr(fh, "seekable", lambda: False)() else None
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_entry("archive/data.pkl"), data)
        if record_byteorder:
            archive.writestr(_entry("archive/byteorder"), sys.byteorder)
        for key, array in storages:
            info = _entry(f"archive/data/{key}")
            info.file_size = array.nbytes
            zip64 = array.nbytes * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule for a zip64 header
            if start is not None:
                header = 30 + len(info.filename.encode()) + 4 + (20 if zip64 else 0)
                padding = -(fh.tell() - start + header) % _ALIGNMENT
                info.extra = b"FB" + padding.to_bytes(2, "little") + b"Z" * padding
            with archive.open(info, "w", force_zip64=zip64) as entry:
                entry.write(memoryview(array.view(np.uint8)))  # (bfloat16 has no buffer format)
        archive.writestr(_entry("archive/version"), "3\n")


def _entry(name):
    return zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
