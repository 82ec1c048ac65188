"""``torch._inductor.config``: the code generator's settings scripts set
(``torch._inductor.config.coordinate_descent_tuning = True``), with torch 2.13's keys and defaults.
The ones ember's code generator reads become ``compile``'s options when set (``max_autotune``,
``epilogue_fusion``, ``triton.cudagraphs``, ...); the others are accepted and ignored; an unknown
key raises torch's AttributeError (see :mod:`ember.compiler.config_module`)."""
import sys

from ..compiler.config_module import INDUCTOR, install

install(sys.modules[__name__], INDUCTOR)
