"""``torch.fx.experimental``: ``proxy_tensor.make_fx``."""
