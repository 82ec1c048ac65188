"""ember.load on files that must be refused without running anything from them (malicious
pickles, compression bombs, deep nesting, tensors outside their storage, truncation), and
ember.save's atomic writes: killed saves never damage a checkpoint and leave temporary files
that the next save cleans up."""
import builtins
import io
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import ember

DATA = pathlib.Path(__file__).parent / "data"


class Payload:
    """Unpickling this creates the sentinel file (a stand-in for arbitrary code)."""

    def __init__(self, sentinel):
        self.sentinel = sentinel

    def __reduce__(self):
        return (builtins.open, (self.sentinel, "w"))


def checkpoint_bytes(obj):
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    return buffer.getvalue()


def rezip(data, replace=None, drop=(), compression=zipfile.ZIP_STORED):
    """``data`` (a zip) with entries replaced (name -> function of the old bytes) or dropped."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", compression) as dst:
        for name in src.namelist():
            if name not in drop:
                body = src.read(name)
                dst.writestr(name, (replace or {}).get(name, lambda b: b)(body))
    return out.getvalue()


def test_malicious_pickles_are_refused_without_running_code(tmp_path):
    sentinel = tmp_path / "pwned"
    payload = pickle.dumps({"w": Payload(str(sentinel))}, protocol=2)
    good = checkpoint_bytes({"w": ember.ones(2)})
    evil = rezip(good, {"archive/data.pkl": lambda _: payload})
    (tmp_path / "raw.pt").write_bytes(payload)
    with pytest.raises(RuntimeError, match="not a readable zip archive"):
        ember.load(tmp_path / "raw.pt", weights_only=False)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL io.open was not an allowed global"):
        ember.load(io.BytesIO(evil))
    with pytest.raises(pickle.UnpicklingError, match="ember.serialization.safe_globals"):
        ember.load(io.BytesIO(evil), weights_only=True)
    # allowed names cannot be turned against the reader: bytes only from text
    encode = b"\x80\x02c_codecs\nencode\nq\x00C\x03abcX\x04\x00\x00\x00zlib\x86R."
    with pytest.raises(pickle.UnpicklingError, match="only to turn text into bytes"):
        ember.load(io.BytesIO(rezip(good, {"archive/data.pkl": lambda _: encode})))
    assert not sentinel.exists()


def test_legacy_object_arrays_are_refused(tmp_path):
    with zipfile.ZipFile(DATA / "ember-0.1-small.pt") as src, zipfile.ZipFile(tmp_path / "npy.pt", "w") as dst:
        dst.writestr("archive/ember.json", src.read("archive/ember.json"))
        array_file = io.BytesIO()
        np.save(array_file, np.array([Payload(str(tmp_path / "pwned"))], dtype=object), allow_pickle=True)
        dst.writestr("archive/data/0.npy", array_file.getvalue())
    with pytest.raises(RuntimeError, match="archive/data/0.npy holds unsupported dtype object"):
        ember.load(tmp_path / "npy.pt", weights_only=False)
    assert not (tmp_path / "pwned").exists()


def test_tensors_must_lie_inside_their_storage():
    good = checkpoint_bytes(ember.ones(4))
    pkl = zipfile.ZipFile(io.BytesIO(good)).read("archive/data.pkl")
    assert b"K\x04\x85" in pkl  # size (4,)
    for bad, match in [(pkl.replace(b"K\x04\x85", b"J\x00\xca\x9a\x3b\x85", 1), "reaches element"),
                       (pkl.replace(b"K\x01\x85", b"J\xff\xff\xff\xff\x85", 1), "negative")]:
        with pytest.raises(RuntimeError, match=match):
            ember.load(io.BytesIO(rezip(good, {"archive/data.pkl": lambda _, b=bad: b})))
    with pytest.raises(RuntimeError, match="holds 8 bytes, its tensor needs 16"):
        ember.load(io.BytesIO(rezip(good, {"archive/data/0": lambda b: b[:8]})))
    with pytest.raises(RuntimeError, match="no entry 'archive/data/0'"):
        ember.load(io.BytesIO(rezip(good, drop=("archive/data/0",))))


def test_compressed_entries_are_refused_unless_allowed():
    # a 4 MiB deflated entry that would inflate to 4 GiB: refused at once, before reading it
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps(None, protocol=2))
        info = zipfile.ZipInfo("archive/data/0")
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as entry:
            chunk = bytes(1 << 24)
            for _ in range(4):  # 64 MiB of zeros in 64 KiB; the refusal reads only the header
                entry.write(chunk)
    with pytest.raises(RuntimeError, match=r"'archive/data/0'.*compressed \(deflate.*allow_compressed=True"):
        ember.load(io.BytesIO(bomb.getvalue()))
    small = rezip(checkpoint_bytes({"w": ember.arange(5.0)}), compression=zipfile.ZIP_DEFLATED)
    with pytest.raises(RuntimeError, match="compressed"):
        ember.load(io.BytesIO(small))
    assert ember.load(io.BytesIO(small), allow_compressed=True)["w"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_deep_nesting_gives_a_clear_error_not_recursion_error(tmp_path):
    depth = 100_000
    deep = b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b"."
    good = checkpoint_bytes(None)
    with pytest.raises(RuntimeError, match="nested more than .* deep"):
        ember.load(io.BytesIO(rezip(good, {"archive/data.pkl": lambda _: deep})))
    with zipfile.ZipFile(DATA / "ember-0.1-small.pt") as src:
        index = src.read("archive/ember.json")
    nested = b'{"format": "ember", "version": 1, "tensors": [], "object": ' + b"[" * depth + b"]" * depth + b"}"
    legacy = rezip((DATA / "ember-0.1-small.pt").read_bytes(), {"archive/ember.json": lambda _: nested})
    with pytest.raises(RuntimeError, match="nested too deeply"):
        ember.load(io.BytesIO(legacy))
    item = []
    for _ in range(depth):
        item = [item]
    with pytest.raises(ValueError, match="nested too deeply to save"):
        ember.save(item, tmp_path / "deep.pt")
    assert index and not (tmp_path / "deep.pt").exists()


def test_truncated_and_corrupt_files_raise_runtime_error():
    data = checkpoint_bytes({"w": ember.ones(100), "b": ember.zeros(3)})
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        with pytest.raises(RuntimeError, match="ember.load"):
            ember.load(io.BytesIO(data[:cut]))
    flipped = bytearray(data)
    flipped[data.index(b"\x00\x00\x80?") + 8] ^= 0xFF  # inside the first storage's values: bad CRC
    with pytest.raises(RuntimeError, match="ember.load"):
        ember.load(io.BytesIO(bytes(flipped)))
    with pytest.raises(RuntimeError, match="no single <folder>/data.pkl"):
        ember.load(io.BytesIO(rezip(data, drop=("archive/data.pkl",))))
    with pytest.raises(pickle.UnpicklingError, match="truncated"):
        ember.load(io.BytesIO(rezip(data, {"archive/data.pkl": lambda b: b[:-9]})))


def test_legacy_truncated_and_corrupt_files_raise_runtime_error():
    data = (DATA / "ember-0.1-small.pt").read_bytes()
    cases = [({"archive/ember.json": lambda b: b[:-5]}, "not valid JSON"),
             ({"archive/ember.json": lambda b: b.replace(b'"version": 1', b'"version": 99')}, "version 99"),
             ({"archive/ember.json": lambda b: b.replace(b'"float32"', b'"int8"', 1)}, "storage holds"),
             ({"archive/ember.json": lambda b: b.replace(b'"type": "tensor"', b'"type": "exec"', 1)},
              "unknown entry type"),
             ({"archive/data/0.npy": lambda b: b.replace(b"(100,), }" + b" " * 8, b"(99999999999,), }")},
              "archive/data/0.npy is truncated or its header is corrupt"),
             ({"archive/data/0.npy": lambda b: b[:-4]}, "archive/data/0.npy is truncated")]
    for replace, match in cases:
        with pytest.raises(RuntimeError, match=match):
            ember.load(io.BytesIO(rezip(data, replace)))
    with pytest.raises(RuntimeError, match="cannot read archive/data/1.npy"):
        ember.load(io.BytesIO(rezip(data, drop=("archive/data/1.npy",))))


def test_dtypes_ember_lacks_are_named():
    import torch
    buffer = io.BytesIO()
    torch.save({"w": torch.zeros(2, dtype=torch.float8_e4m3fn)}, buffer)  # (_rebuild_tensor_v3 of float8)
    with pytest.raises(RuntimeError, match="torch.float8_e4m3fn, which ember does not have"):
        ember.load(io.BytesIO(buffer.getvalue()))


def test_failure_mid_save_leaves_the_existing_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(3)}, path)
    before = path.read_bytes()

    def fail(*args):
        raise OSError("disk full")
    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"w": ember.zeros(1000)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]  # no temporary file left behind
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
        ember.save(ember.ones(1), tmp_path / "missing" / "x.pt")


KILLED_SAVE = """
import os, sys, time, ember
os.fsync = lambda fd: (print("writing", flush=True), time.sleep(60))  # killed while the file is being written
ember.save({"w": ember.zeros(250_000)}, sys.argv[1])
"""


def test_killed_saves_leave_recognisable_temp_files_that_the_next_save_removes(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(3)}, path)
    for _ in range(2):  # each killed save leaves one temporary file; the next save removes it
        process = subprocess.Popen([sys.executable, "-c", KILLED_SAVE, str(path)], stdout=subprocess.PIPE, text=True)
        try:
            assert process.stdout.readline() == "writing\n"
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            process.stdout.close()
        temps = sorted(p.name for p in tmp_path.iterdir() if p.name != "ckpt.pt")
        assert temps == [f".ckpt.pt.ember-tmp-{process.pid}-{temps[0][-8:]}"], temps
        assert os.path.getsize(tmp_path / temps[0]) > 1_000_000
    assert ember.load(path)["w"].tolist() == [1.0, 1.0, 1.0]  # the old checkpoint survived
    live = tmp_path / f".ckpt.pt.ember-tmp-{os.getppid()}-00000000"  # a save still running elsewhere
    live.write_bytes(b"")
    other = tmp_path / f".other.pt.ember-tmp-{temps[0].split('-')[-2]}-00000000"
    other.write_bytes(b"")
    ember.save({"w": ember.zeros(2)}, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ckpt.pt", live.name, other.name])
    assert ember.load(path)["w"].tolist() == [0.0, 0.0]
