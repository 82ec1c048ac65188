"""Small 2-D classification problems generated from a seed: XOR and separable clouds."""
import numpy as np

from .split import stratified_split

_XOR_CORNERS = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float32)
_XOR_LABELS = np.array([0, 1, 1, 0], dtype=np.int64)


def xor(samples_per_corner=1, noise=0.0, seed=0):
    """The XOR problem: label 1 when exactly one coordinate is 1.

    With the defaults these are the four points of the truth table, in the order
    ``(0,0)→0, (0,1)→1, (1,0)→1, (1,1)→0``. No straight line separates the two classes
    (Minsky & Papert, *Perceptrons*, 1969), which is what makes XOR the classic test of a
    hidden layer.

    Args:
        samples_per_corner: points drawn around each corner. Default 1.
        noise: standard deviation of Gaussian jitter added to every coordinate. Default 0.
        seed: seed of the jitter. Default 0.

    Returns:
        ``(x, y)``: ``x`` of shape ``(4 * samples_per_corner, 2)``, ``float32``; ``y`` of
        shape ``(4 * samples_per_corner,)``, ``int64``, values 0 and 1. Points are grouped
        by corner, in the order above.

    Raises:
        ValueError: ``samples_per_corner < 1`` or ``noise < 0``.
    """
    if samples_per_corner < 1:
        raise ValueError(f"samples_per_corner must be at least 1, got {samples_per_corner}")
    if noise < 0:
        raise ValueError(f"noise must be non-negative, got {noise}")
    x = np.repeat(_XOR_CORNERS, samples_per_corner, axis=0)
    y = np.repeat(_XOR_LABELS, samples_per_corner)
    if noise > 0:
        x = x + np.random.default_rng(seed).normal(0.0, noise, size=x.shape).astype(np.float32)
    return x, y


def linearly_separable(n=200, seed=0, margin=0.5, test_size=0.25):
    """Two 2-D point clouds that a straight line separates, with an empty band between them.

    Points are drawn from a standard normal; a random line through the origin labels them
    (1 on the side its normal points to, else 0), and each point is then pushed
    ``margin / 2`` away from the line, so the two classes are at least ``margin`` apart
    along the normal. This is the setting of the perceptron convergence theorem (Novikoff,
    1962): a separating line exists, so Rosenblatt's rule finds one in finitely many mistakes.

    Args:
        n: total number of points, train and test together. Default 200.
        seed: seed of the line, the points and the split. Default 0.
        margin: width of the empty band between the classes, in the units of the
            coordinates; must be non-negative. Default 0.5.
        test_size: fraction of the points held out for testing, in ``(0, 1)``. Default 0.25.

    Returns:
        :class:`ArraySplit` with ``x_*`` of shape ``(N, 2)``, ``float32``, and ``y_*`` of shape
        ``(N,)``, ``int64``, values 0 and 1; the split is stratified by class.

    Raises:
        ValueError: ``margin < 0``, ``n`` too small to give each part of each class a
            point, or ``test_size`` outside ``(0, 1)``.
    """
    if margin < 0:
        raise ValueError(f"margin must be non-negative, got {margin}")
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0.0, 2 * np.pi)
    normal = np.array([np.cos(angle), np.sin(angle)])
    x = rng.standard_normal((n, 2))
    side = np.where(x @ normal >= 0, 1.0, -1.0)
    x = x + np.outer(side * margin / 2, normal)
    y = (side > 0).astype(np.int64)
    return stratified_split(x.astype(np.float32), y, test_size, seed)
