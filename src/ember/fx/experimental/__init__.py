"""``torch.fx.experimental``: ``dynamic_spec`` (declared dynamic shapes)."""
