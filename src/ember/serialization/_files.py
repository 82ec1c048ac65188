"""The file side of checkpoints: atomic writes with recognisable temporary files, and the
zip checks that keep a small file from expanding into a huge load."""
import os
import re
import secrets
import zipfile

_TEMP_MARK = ".ember-tmp-"


def temp_name(path):
    """``.NAME.ember-tmp-PID-RANDOM`` beside ``path``: hidden, and readable as "ember was
    saving NAME in process PID" by a person listing the folder."""
    directory, base = os.path.split(os.path.abspath(path))
    return os.path.join(directory, f".{base}{_TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")


def remove_stale_temp_files(path):
    """Removes temporary files of earlier saves of ``path`` whose process has ended (a save
    killed mid-write leaves its temporary file, which no one else would ever clean up). Files
    of a process that is still running, or of this process, are left alone; a recycled
    process id only keeps a stale file until that process ends."""
    directory, base = os.path.split(os.path.abspath(path))
    pattern = re.compile(re.escape(f".{base}{_TEMP_MARK}") + r"(\d+)-[0-9a-f]+\Z")
    for entry in os.listdir(directory):
        match = pattern.match(entry)
        if match is None or int(match.group(1)) == os.getpid() or _process_alive(int(match.group(1))):
            continue
        try:
            os.unlink(os.path.join(directory, entry))
        except OSError:
            pass  # removed by a concurrent save, or not ours to remove


def _process_alive(pid):
    if os.name != "posix":
        return True  # no cheap liveness check without side effects: keep the file
    try:
        os.kill(pid, 0)  # signal 0 only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_atomically(path, write):
    """Runs ``write(file)`` on a new temporary file beside ``path`` and renames it over
    ``path`` once it is complete and flushed to disk; on any error the temporary file is
    removed and an existing ``path`` stays as it was. Stale temporary files of ``path`` left
    by killed saves are removed first. RuntimeError if the parent directory does not exist."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {os.path.dirname(path) or directory} does not exist.")
    remove_stale_temp_files(path)
    temp = temp_name(path)
    # O_EXCL: never write through someone else's file or link; 0o666 lets the umask decide,
    # as for a file opened normally.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


def open_archive(fh, name, allow_compressed):
    """The zip archive in ``fh``, after checking that no entry is compressed: neither ember nor
    PyTorch compresses checkpoints, and a compressed entry lets a few megabytes of file expand
    to gigabytes in memory. ``allow_compressed=True`` skips that check for trusted files.
    Stored entries are read at their recorded size, which the file itself must contain."""
    try:
        archive = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise RuntimeError(f"ember.load: {name} is not a PyTorch or ember checkpoint, or it is truncated "
                           f"or corrupt: it is not a readable zip archive ({e})") from None
    if not allow_compressed:
        for info in archive.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                method = {zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
                          zipfile.ZIP_LZMA: "lzma"}.get(info.compress_type, f"method {info.compress_type}")
                raise RuntimeError(
                    f"ember.load: entry {info.filename!r} of {name} is compressed ({method}, "
                    f"{info.compress_size} bytes expanding to {info.file_size}); ember and PyTorch never "
                    f"compress checkpoints, and a compressed entry can expand to gigabytes. Pass "
                    f"allow_compressed=True to ember.load if you trust this file.")
    return archive


def read_entry_into(archive, member, out, name):
    """Reads zip entry ``member`` into the NumPy array ``out`` (whose byte size must equal the
    entry's), checking its CRC; RuntimeError naming ``name`` and the entry otherwise."""
    try:
        info = archive.getinfo(member)
        if info.file_size != out.nbytes:
            raise RuntimeError(f"ember.load: {name} is truncated or corrupt: entry {member!r} holds "
                               f"{info.file_size} bytes, its tensor needs {out.nbytes}")
        with archive.open(info) as entry:
            entry.readinto(out.reshape(-1).view("u1"))
            entry.read(1)  # reaching the end of the entry checks its CRC
    except KeyError:
        raise RuntimeError(f"ember.load: {name} is truncated or corrupt: it has no entry {member!r}") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise RuntimeError(f"ember.load: {name} is truncated or corrupt: cannot read {member!r} "
                           f"({type(e).__name__}: {e})") from None
