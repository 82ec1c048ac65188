"""``torch.export``: capture a module's forward into a program that runs without its Python
code (:func:`export`, with ``dynamic_shapes`` declared by :class:`Dim`), and save and load it
safely (:func:`save`, :func:`load`)."""
from .dynamic_shapes import Dim
from . import graph_signature
from .exported_program import ExportedProgram, ExportGraphSignature, export
from .serialize import load, save

__all__ = ["export", "ExportedProgram", "ExportGraphSignature", "Dim", "save", "load", "graph_signature"]
