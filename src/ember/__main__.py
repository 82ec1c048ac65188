"""``python -m ember``: the ``ember`` command."""
import sys

from .cli import main

sys.exit(main())
