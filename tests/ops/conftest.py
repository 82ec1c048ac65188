"""Lets the op tests import the differential harness (``from harness import ...``)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
