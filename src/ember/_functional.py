"""Transitional: the names nn/ and utils/ still import from here, re-exported from their homes
in ``ember._ops``; this module goes once they import from ``_ops`` directly."""
from ._ops.args import c_type_name as _c_type, dims_arg as _dims, product as _prod  # noqa: F401
from ._ops.indexing import one_hot  # noqa: F401
from ._ops.inplace import write_result as _inplace_result  # noqa: F401
from ._ops.join import cat, stack, triu  # noqa: F401
from ._ops.linalg import einsum, matmul, norm, vector_norm  # noqa: F401
from ._ops.pointwise_binary import div, minimum, where  # noqa: F401
from ._ops.pointwise_unary import sigmoid, tanh  # noqa: F401
from ._ops.shape import broadcast_shapes, broadcast_tensors  # noqa: F401
from ._ops.softmax import log_softmax, softmax  # noqa: F401
from ._ops.sort import kthvalue, sort, topk  # noqa: F401
