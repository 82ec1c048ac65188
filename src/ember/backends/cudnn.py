"""cuDNN switches that programs set; ember keeps them only as attributes."""
deterministic = False
benchmark = False
enabled = False


def is_available():
    return False
