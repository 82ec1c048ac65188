"""Compiling captured graphs: capture (graph.py) and code generation (backends/)."""
