"""``torch.utils.model_zoo``: the old name of :func:`ember.hub.load_state_dict_from_url`, which
model files copied from older torchvision import (``model_zoo.load_url(url)``)."""
from ..hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
