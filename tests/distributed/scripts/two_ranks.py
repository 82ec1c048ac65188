"""ddp_parity.py, sync_batchnorm.py and windows.py in one 2-rank launch (each inits and
destroys its process group): a launch costs seconds of start-up, the checks themselves little."""
import runpy
from pathlib import Path

for script in ("ddp_parity.py", "sync_batchnorm.py", "windows.py"):
    runpy.run_path(str(Path(__file__).with_name(script)))
