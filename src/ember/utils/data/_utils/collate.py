"""``torch.utils.data._utils.collate``: the batching functions of :mod:`ember.utils.data._collate`."""
from .._collate import (collate, collate_float_fn, collate_int_fn, collate_numpy_array_fn,
                        collate_numpy_scalar_fn, collate_str_fn, collate_tensor_fn, default_collate,
                        default_collate_fn_map, default_convert)

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map", "collate_tensor_fn",
           "collate_numpy_array_fn", "collate_numpy_scalar_fn", "collate_float_fn", "collate_int_fn",
           "collate_str_fn"]
