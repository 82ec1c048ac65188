"""``torch.fx.experimental``: ``proxy_tensor.make_fx``, ``dynamic_spec`` (declared dynamic shapes)."""
