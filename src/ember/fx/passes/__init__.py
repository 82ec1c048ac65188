"""``torch.fx.passes``: analyses over fx graphs (``shape_prop``)."""
