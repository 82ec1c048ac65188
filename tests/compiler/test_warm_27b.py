"""The warm start's cache key, BLAS lookup and side-effect hook (session 27, WARM27B): the
package's files are stated through os.scandir (every .py and .h file, sorted, an in-place edit
seen), the graph's text takes its common values by exact type (same text as before), the hook
skips the common C calls' owners (lists, dicts, builtins) before its ABC check, and the C
backend reuses the BLAS libraries ember's backend listed at import."""
import io
import os
import sys

import numpy as np

import ember
from ember import _backend
from ember.compiler import side_effects
from ember.compiler.backends import c, cache


def _walked(root):
    """The package listing as os.walk gives it: (path under root, size, mtime_ns), sorted."""
    found = []
    for where, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".h")):
                st = os.stat(os.path.join(where, name))
                found.append(f"{os.path.join(where, name)[len(str(root)):]} {st.st_size} {st.st_mtime_ns}")
    return sorted(found, key=lambda line: line.split(" ")[0].split(os.sep))


def test_sources_stated_as_walked_and_an_in_place_edit_changes_them(tmp_path):
    (tmp_path / "sub" / "__pycache__").mkdir(parents=True)
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "k.h").write_text("/* */\n")
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    (tmp_path / "sub" / "__pycache__" / "b.py").write_text("")  # skipped
    (tmp_path / "notes.txt").write_text("")  # skipped
    out = []
    cache._stat_sources(str(tmp_path), "/", out)
    assert out == _walked(tmp_path) and len(out) == 3
    st = os.stat(tmp_path / "sub" / "b.py")
    with open(tmp_path / "sub" / "b.py", "w") as f:  # in place: the directory's time unchanged
        f.write("y = 22\n")
    os.utime(tmp_path / "sub" / "b.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    again = []
    cache._stat_sources(str(tmp_path), "/", again)
    assert again != out and again == _walked(tmp_path)
    package = []
    cache._stat_sources(str(cache._PACKAGE), "/", package)
    assert package == _walked(cache._PACKAGE) and len(package) > 100


def test_graph_text_of_common_values_unchanged():
    out = []
    cache._canon((1, "a", None, True, {"k": ember.float32, "s": (2, 3)}, [1.5], np.dtype("f4")), {}, out)
    assert "".join(out) == ("(int:1str:'a'NoneType:Nonebool:True{'k'=dtype:float32's'=(int:2int:3)}"
                            "[f:0x1.8000000000000p+0)np:<f4)")


def test_blas_libraries_listed_once_and_found():
    from threadpoolctl import ThreadpoolController
    fresh = sorted(lib.filepath for lib in ThreadpoolController().lib_controllers)
    assert c._blas_libraries() is _backend.BLAS_LIBRARIES
    # (the libraries loaded since ember's import, torch's in a full run, are listed afresh only)
    assert {lib.filepath for lib in c._blas_libraries()} <= set(fresh)
    assert any("numpy" in lib.filepath for lib in c._blas_libraries())
    assert c._openblas() is not None and c.numpy_blas_pointers() is not None  # SciPy's and NumPy's OpenBLAS


def test_io_call_skips_common_owners_and_still_names_io():
    for fn in (len, isinstance, [].append, {}.get, set().add, sys.getprofile, print, "".join):
        assert side_effects._io_call(fn) is None, fn
    assert side_effects._io_call(io.StringIO().write) == "StringIO.write()"
    assert side_effects._io_call(open) == "open()"
    assert side_effects._io_call(os.remove) == "os.remove()"
