"""``torch._dynamo.testing``'s ``CompileCounter``: a callable backend that counts compiled graphs."""

__all__ = ["CompileCounter"]


class CompileCounter:
    """A backend (``ember.compile(fn, backend=CompileCounter())``) counting the graphs compiled
    (``frame_count``) and the operations in them (``op_count``); it runs each graph as captured."""

    def __init__(self):
        self.frame_count = 0
        self.op_count = 0

    def __call__(self, gm, example_inputs):
        """Counts ``gm``'s graph and returns its ``forward``."""
        self.frame_count += 1
        self.op_count += sum("call" in n.op for n in gm.graph.nodes)
        return gm.forward

    def clear(self):
        """Resets both counts."""
        self.frame_count = 0
        self.op_count = 0
