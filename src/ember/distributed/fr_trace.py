"""Reads every rank's flight-recorder dump and says what went wrong (``torchfrtrace``).

Findings, one line each:

- a rank of a group that wrote no dump (it died before it could, such as a SIGKILL);
- a rank missing from a collective: its group's other ranks issued collective ``seq`` and
  this rank's recorder stops before it (it hung or died there);
- a collective that never completed on a rank, with the error recorded (timeout, peer failure);
- a collective that differs across ranks in operation, sizes or dtypes.

Source: https://pytorch.org/docs/stable/torch_nccl_debugging.html (fr_trace analyzer)
"""
import json
import re
from pathlib import Path

__all__ = ["load_dumps", "analyze"]


def load_dumps(directory):
    """``{rank: dump}`` for the dumps in ``directory`` (JSON files with a ``version`` and
    ``entries``; the rank is the dump's ``rank`` or the trailing number of the file name).

    Raises:
        FileNotFoundError: the directory does not exist or holds no dump.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"no such directory: {directory}")
    dumps = {}
    for path in sorted(directory.iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        try:
            dump = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError, OSError):
            continue
        if not isinstance(dump, dict) or "entries" not in dump or "version" not in dump:
            continue
        number = re.search(r"(\d+)(\.json)?$", path.name)
        rank = dump.get("rank", int(number.group(1)) if number else None)
        if rank is not None:
            dumps[int(rank)] = dump
    if not dumps:
        raise FileNotFoundError(f"no flight-recorder dumps in {directory}")
    return dumps


def _signature(entry):
    return (entry["profiling_name"], entry["input_sizes"], entry["input_dtypes"])


def analyze(dumps):
    """The findings (strings) for ``{rank: dump}``, most telling first."""
    findings = []
    groups = {}
    for dump in dumps.values():
        for name, config in dump.get("pg_config", {}).items():
            ranks = json.loads(config["ranks"]) if isinstance(config["ranks"], str) else config["ranks"]
            groups.setdefault(name, set()).update(ranks)
    everyone = set().union(*groups.values()) if groups else set(dumps)
    for rank in sorted(everyone - set(dumps)):
        findings.append(f"rank {rank} wrote no dump: it died before it could (killed or crashed)")
    by_group = {}
    for rank, dump in sorted(dumps.items()):
        for entry in dump["entries"]:
            if entry.get("is_p2p"):
                continue
            key = entry["process_group"][0]
            by_group.setdefault(key, {}).setdefault(entry["collective_seq_id"], {})[rank] = entry
    reported = set()
    for group_name, collectives in sorted(by_group.items()):
        members = sorted(r for r in dumps if r in groups.get(group_name, dumps))
        for seq in sorted(collectives):
            seen = collectives[seq]
            some = next(iter(seen.values()))
            missing = [r for r in members if r not in seen
                       and max((e["collective_seq_id"] for e in dumps[r]["entries"]
                                if e["process_group"][0] == group_name), default=0) < seq]
            for rank in missing:
                if (group_name, rank) in reported:
                    continue  # its first missing collective is the one that matters
                reported.add((group_name, rank))
                findings.append(f"rank {rank} is missing from collective {seq} ({some['profiling_name']}) "
                                f"of process group {group_name!r}: it stopped before it")
            if len({json.dumps(_signature(e)) for e in seen.values()}) > 1:
                shown = "; ".join(f"rank {r}: {e['profiling_name']} sizes {e['input_sizes']} "
                                  f"dtypes {e['input_dtypes']}" for r, e in sorted(seen.items()))
                findings.append(f"collective {seq} of process group {group_name!r} differs across ranks: {shown}")
            for rank, entry in sorted(seen.items()):
                if entry["state"] != "completed":
                    why = f": {entry['error']}" if entry.get("error") else ""
                    findings.append(f"collective {seq} ({entry['profiling_name']}) of process group "
                                    f"{group_name!r} never completed on rank {rank}{why}")
    return findings
