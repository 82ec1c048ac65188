"""``torch.hub``'s checkpoint half (https://pytorch.org/docs/stable/hub.html): files by URL,
cached where torch caches them, so weights torch downloaded load here too.

- :func:`get_dir` / :func:`set_dir`: the hub folder, ``$TORCH_HOME/hub`` (``TORCH_HOME``
  defaults to ``$XDG_CACHE_HOME/torch``, that to ``~/.cache/torch``), as torch.
- :func:`download_url_to_file`: any URL ``urllib`` opens (``file://`` included), written to a
  temporary file beside the destination and renamed into place, its SHA-256 checked
  against a hash prefix when given.
- :func:`load_state_dict_from_url`: the file cached in ``<hub>/checkpoints`` (downloaded
  when missing), read by :func:`ember.load` (``weights_only=False`` by default, as torch).

- :func:`load` with ``source="local"``: a model from a directory's ``hubconf.py``, which is
  run (it is Python code: load only directories you trust, as with torch). Repositories are
  not downloaded, so ``source="github"`` and ``list``/``help`` are not here.
"""
import contextlib
import errno
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request

from .serialization import load as _load_checkpoint

__all__ = ["get_dir", "set_dir", "download_url_to_file", "load_state_dict_from_url", "load"]

_hub_dir = None
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # a file name's hash prefix: resnet18-f37072fd.pth


def _get_torch_home():
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"),
                                                                   "torch")))


def get_dir():
    """The folder hub files are cached in: set by :func:`set_dir`, else ``$TORCH_HOME/hub``."""
    return _hub_dir if _hub_dir is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Caches hub files in ``d`` (``~`` expanded) from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads ``url`` to the file ``dst``, atomically (a temporary file in its folder,
    renamed). RuntimeError when ``hash_prefix`` is given and the SHA-256 of the file does not
    start with it; urllib's errors when the URL cannot be read. ``progress`` is accepted
    (ember shows no bar)."""
    dst = os.path.expanduser(dst)
    folder = os.path.dirname(os.path.abspath(dst))
    sha256 = hashlib.sha256()
    with urllib.request.urlopen(url) as response, \
            tempfile.NamedTemporaryFile(delete=False, dir=folder, prefix=".download-") as f:
        try:
            for chunk in iter(lambda: response.read(1 << 16), b""):
                f.write(chunk)
                sha256.update(chunk)
            f.close()
            if hash_prefix is not None and not sha256.hexdigest().startswith(hash_prefix):
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{sha256.hexdigest()}")')
            shutil.move(f.name, dst)
        finally:
            if os.path.exists(f.name):
                os.remove(f.name)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """The object saved at ``url`` (a state_dict, usually), from ``model_dir`` (default
    ``<hub dir>/checkpoints``) where it is cached under ``file_name`` (default: the URL's
    last path part), downloaded first when missing; with ``check_hash`` the file name's
    ``-<hex>.`` part must prefix its SHA-256. Loaded by :func:`ember.load` with
    ``map_location`` and ``weights_only``."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    try:
        os.makedirs(model_dir)
    except OSError as e:
        if e.errno != errno.EEXIST:
            raise
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None, progress=progress)
    return _load_checkpoint(cached_file, map_location=map_location, weights_only=weights_only)


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """``model(*args, **kwargs)``, the entry point called ``model`` in the ``hubconf.py`` of the
    directory ``repo_or_dir`` (``source="local"``): the file is imported with the directory
    first on ``sys.path`` (so it can import the repository's own modules), which runs its code.

    Raises:
        ValueError: ``source`` is neither "github" nor "local", or ``model`` is not a string.
        RuntimeError: ``source="github"`` (ember downloads no repositories: clone it and pass
            its directory with ``source="local"``); a name in the hubconf's ``dependencies``
            cannot be imported; the hubconf has no callable ``model``.
        FileNotFoundError: the directory has no ``hubconf.py``.

    Source: PyTorch 2.13, ``torch.hub.load`` (https://pytorch.org/docs/stable/hub.html#torch.hub.load).
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        raise RuntimeError(f"ember.hub.load downloads no repositories ({repo_or_dir!r}): clone it and "
                           "pass its directory with source='local'")
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    path = os.path.join(repo_or_dir, "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, "no hubconf.py in the directory", path)
    with _first_on_path(repo_or_dir):
        spec = importlib.util.spec_from_file_location("hubconf", path)
        hubconf = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(hubconf)
        missing = [name for name in getattr(hubconf, "dependencies", None) or ()
                   if importlib.util.find_spec(name) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
        entry = getattr(hubconf, model, None)
        if entry is None or not callable(entry):
            raise RuntimeError(f"Cannot find callable {model} in hubconf")
        return entry(*args, **kwargs)


@contextlib.contextmanager
def _first_on_path(directory):
    sys.path.insert(0, directory)
    try:
        yield
    finally:
        sys.path.remove(directory)
