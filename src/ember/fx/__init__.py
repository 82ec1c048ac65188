"""``torch.fx``'s names where ember has them: ``ember.fx.experimental.dynamic_spec``."""
