"""The pytorch/examples programs of ``tests/compiler/real_programs_32.py`` (gcn, language_translation,
mnist, the tutorials' seq2seq, spatial transformer and style transfer), one iteration of each loop timed as
``bench_real_programs_30.py`` times its programs: torch eager, ``torch.compile`` (inductor),
ember eager and ``ember.compile``; ratios to torch eager, graph counts and whether each compiled
run logged eager's numbers.

    PYTHONPATH=src python benchmarks/bench_real_programs_32.py [name,...] [steps]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "compiler"))
import bench_real_programs_30 as bench  # noqa: E402
import real_programs_32 as programs  # noqa: E402

if __name__ == "__main__":
    bench.main(programs.PROGRAMS)
