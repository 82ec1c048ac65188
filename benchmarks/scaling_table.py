"""The scaling table of docs/distributed.md, computed from a measured alpha and beta.

Hockney's model of one all_reduce of ``M`` bytes on ``p`` ranks, with a latency ``alpha`` per
message and a cost ``beta`` per byte (Thakur, Rabenseifner & Gropp, "Optimization of
Collective Communication Operations in MPICH", IJHPCA 19(1), 2005):

- ring: ``2 (p - 1) alpha + 2 (p - 1) / p * M beta``,
- binary tree (reduce then broadcast): ``2 log2(p) (alpha + M beta)``.

The table sets the figures measured here (``python benchmarks/bench_distributed.py`` prints
them) beside published ones for InfiniBand HDR. The page's table is written by this script
and nothing else; a test checks that it matches the alpha and beta its marker line records.

Run: python benchmarks/scaling_table.py ALPHA_US BETA_NS_PER_BYTE [--write docs/distributed.md]
  or python benchmarks/scaling_table.py --json RESULT.json [--write docs/distributed.md]
(RESULT.json: bench_distributed.py's last line, with ``alpha_s`` and ``beta_s_per_byte``.)
"""
import argparse
import json
import math
import os
import re
import sys
import tempfile

RANKS = (8, 32, 128, 1024)
# Gradient bytes (float32) of one step: LeNet-5 as in ember.milestones.lenet, ResNet-50 as in
# torchvision (25,557,032 parameters).
LENET_BYTES = 61_706 * 4
RESNET50_BYTES = 25_557_032 * 4
# MPI over InfiniBand HDR: a link carries 200 Gb/s = 25 GB/s, and point-to-point MPI latencies
# under 1 us are published for InfiniBand (D. K. Panda, "The MVAPICH2 Project", SC'18); 2 us per
# step of a collective leaves room for the software above the wire.
IB_ALPHA, IB_BETA = 2e-6, 1 / 25e9
MARKER = re.compile(r"<!-- scaling-table alpha_us=([0-9.]+) beta_ns_per_byte=([0-9.]+) -->")


def ring(p, nbytes, alpha, beta):
    """Seconds of a ring all_reduce of ``nbytes`` on ``p`` ranks."""
    return 2 * (p - 1) * alpha + 2 * (p - 1) / p * nbytes * beta


def tree(p, nbytes, alpha, beta):
    """Seconds of a binary-tree all_reduce (reduce, then broadcast) of ``nbytes`` on ``p`` ranks."""
    return 2 * math.log2(p) * (alpha + nbytes * beta)


def _duration(seconds):
    return f"{seconds:.2f} s" if seconds >= 1 else f"{seconds * 1e3:.1f} ms"


def table(alpha_us, beta_ns_per_byte):
    """The page's marker line and markdown table for ``alpha`` (us) and ``beta`` (ns/byte)."""
    alpha, beta = alpha_us * 1e-6, beta_ns_per_byte * 1e-9
    lines = [f"<!-- scaling-table alpha_us={alpha_us:g} beta_ns_per_byte={beta_ns_per_byte:g} -->",
             "| ranks | LeNet ring (here) | LeNet tree (here) | ResNet-50 ring (here) "
             "| ResNet-50 ring (IB) | ResNet-50 tree (IB) |",
             "|---|---|---|---|---|---|"]
    for p in RANKS:
        cells = [ring(p, LENET_BYTES, alpha, beta), tree(p, LENET_BYTES, alpha, beta),
                 ring(p, RESNET50_BYTES, alpha, beta), ring(p, RESNET50_BYTES, IB_ALPHA, IB_BETA),
                 tree(p, RESNET50_BYTES, IB_ALPHA, IB_BETA)]
        lines.append(f"| {p} | " + " | ".join(_duration(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def recorded(page):
    """(alpha_us, beta_ns_per_byte, the table as it stands) from the page's text."""
    found = MARKER.search(page)
    if found is None:
        raise ValueError("no '<!-- scaling-table alpha_us=... beta_ns_per_byte=... -->' line in the page")
    rest = page[found.start():]
    end = rest.find("\n\n")
    return float(found.group(1)), float(found.group(2)), rest[:len(rest) if end < 0 else end + 1]


def rewrite(path, alpha_us, beta_ns_per_byte):
    """Replaces the page's table with one for the new figures (written atomically)."""
    with open(path) as fh:
        page = fh.read()
    old = recorded(page)[2]
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".scaling-")
    with os.fdopen(fd, "w") as fh:
        fh.write(page.replace(old, table(alpha_us, beta_ns_per_byte), 1))
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("alpha_us", nargs="?", type=float, help="all_reduce latency, microseconds")
    parser.add_argument("beta_ns_per_byte", nargs="?", type=float, help="all_reduce cost, ns per byte")
    parser.add_argument("--json", help="bench_distributed.py's JSON line, in a file ('-': stdin)")
    parser.add_argument("--write", metavar="PAGE", help="replace the table in PAGE")
    args = parser.parse_args(argv)
    if args.json:
        with (sys.stdin if args.json == "-" else open(args.json)) as fh:
            result = json.loads(fh.read().strip().splitlines()[-1])
        alpha_us, beta_ns = round(result["alpha_s"] * 1e6, 1), round(result["beta_s_per_byte"] * 1e9, 3)
    elif args.alpha_us is None or args.beta_ns_per_byte is None:
        parser.error("give ALPHA_US and BETA_NS_PER_BYTE, or --json")
    else:
        alpha_us, beta_ns = args.alpha_us, args.beta_ns_per_byte
    if args.write:
        rewrite(args.write, alpha_us, beta_ns)
    else:
        print(table(alpha_us, beta_ns), end="")


if __name__ == "__main__":
    main()
