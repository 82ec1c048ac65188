"""cuDNN switches that programs set; ember keeps them only as attributes (PyTorch's values on
a machine without CUDA)."""
deterministic = False
benchmark = False
enabled = True
allow_tf32 = True


def is_available():
    """False: ember loads no cuDNN library (https://pytorch.org/docs/stable/backends.html)."""
    return False


def version():
    """None: no cuDNN library is loaded."""
    return None
