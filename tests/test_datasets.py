"""ember.datasets: shapes, dtypes, value ranges, determinism, stratification, errors."""
import numpy as np
import pytest
import sklearn.datasets

import ember
from ember.datasets import ArraySplit, digits, linearly_separable, load_digits, xor


@pytest.fixture(scope="module")
def sklearn_digits():
    return sklearn.datasets.load_digits()


def sorted_rows(x):
    x = x.reshape(len(x), -1)
    return x[np.lexsort(x.T[::-1])]


def test_load_digits_shapes_dtypes_and_range():
    split = load_digits()
    assert isinstance(split, ArraySplit)
    assert split.x_train.shape == (1437, 64) and split.x_test.shape == (360, 64)
    assert split.y_train.shape == (1437,) and split.y_test.shape == (360,)
    assert split.x_train.dtype == np.float32 and split.y_train.dtype == np.int64
    assert split.x_train.min() == 0.0 and split.x_train.max() == 1.0
    assert set(np.unique(split.y_test)) == set(range(10))


def test_load_digits_is_a_partition_of_sklearn_digits(sklearn_digits):
    split = load_digits()
    ours = np.concatenate([np.column_stack([split.x_train * 16, split.y_train]),
                           np.column_stack([split.x_test * 16, split.y_test])])
    theirs = np.column_stack([sklearn_digits.data, sklearn_digits.target])
    np.testing.assert_array_equal(sorted_rows(ours), sorted_rows(theirs))


def test_load_digits_is_stratified(sklearn_digits):
    split = load_digits(test_size=0.2)
    expected = np.bincount(sklearn_digits.target) * 0.2
    assert np.all(np.abs(np.bincount(split.y_test, minlength=10) - expected) <= 1)


def test_load_digits_is_deterministic_per_seed():
    a, b, c = load_digits(seed=0), load_digits(seed=0), load_digits(seed=1)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.y_train, c.y_train)


def test_load_digits_unflattened_is_single_channel_images():
    flat, images = load_digits(), load_digits(flatten=False)
    assert images.x_train.shape == (1437, 1, 8, 8) and images.x_train.dtype == np.float32
    np.testing.assert_array_equal(images.x_test.reshape(360, 64), flat.x_test)


@pytest.mark.parametrize("test_size", [0.0, 1.0, -0.1, 1.5])
def test_load_digits_rejects_bad_test_size(test_size):
    with pytest.raises(ValueError, match="test_size"):
        load_digits(test_size=test_size)


@pytest.mark.parametrize("split, length", [("train", 1437), ("test", 360)])
def test_digits_is_a_tensor_dataset_of_the_split(split, length):
    dataset = digits(split)
    arrays = load_digits()
    x, y = (arrays.x_train, arrays.y_train) if split == "train" else (arrays.x_test, arrays.y_test)
    assert isinstance(dataset, ember.utils.data.TensorDataset)
    assert len(dataset) == length
    images, labels = dataset.tensors
    assert images.dtype == ember.float32 and labels.dtype == ember.int64
    assert tuple(images.shape) == (length, 64)
    np.testing.assert_array_equal(images.numpy(), x)
    np.testing.assert_array_equal(labels.numpy(), y)
    image, label = dataset[0]
    assert tuple(image.shape) == (64,) and label.item() == y[0]


def test_digits_unflattened_and_bad_split():
    assert tuple(digits("test", flatten=False)[0][0].shape) == (1, 8, 8)
    with pytest.raises(ValueError, match="split must be 'train' or 'test', got 'valid'"):
        digits("valid")


def test_xor_is_the_truth_table():
    x, y = xor()
    np.testing.assert_array_equal(x, [[0, 0], [0, 1], [1, 0], [1, 1]])
    np.testing.assert_array_equal(y, [0, 1, 1, 0])
    assert x.dtype == np.float32 and y.dtype == np.int64


def test_xor_noisy_samples():
    x, y = xor(samples_per_corner=500, noise=0.1, seed=3)
    assert x.shape == (2000, 2) and y.shape == (2000,) and x.dtype == np.float32
    np.testing.assert_array_equal(y, np.repeat([0, 1, 1, 0], 500))
    corners = np.repeat([[0, 0], [0, 1], [1, 0], [1, 1]], 500, axis=0)
    assert abs((x - corners).std() - 0.1) < 0.01
    np.testing.assert_array_equal(x, xor(samples_per_corner=500, noise=0.1, seed=3)[0])
    assert not np.array_equal(x, xor(samples_per_corner=500, noise=0.1, seed=4)[0])


@pytest.mark.parametrize("kwargs, message", [({"samples_per_corner": 0}, "samples_per_corner"),
                                             ({"noise": -1.0}, "noise")])
def test_xor_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        xor(**kwargs)


def test_linearly_separable_shapes_dtypes_and_stratification():
    split = linearly_separable(n=200, seed=0, test_size=0.25)
    assert split.x_train.shape == (150, 2) and split.x_test.shape == (50, 2)
    assert split.x_train.dtype == np.float32 and split.y_train.dtype == np.int64
    assert set(np.unique(split.y_train)) == {0, 1}
    total = np.bincount(np.concatenate([split.y_train, split.y_test]))
    assert np.all(np.abs(np.bincount(split.y_test) - total * 0.25) <= 1)


@pytest.mark.parametrize("margin", [0.0, 0.5, 2.0])
def test_linearly_separable_has_the_margin(margin):
    # A hard-margin linear SVM finds the widest band; it must be at least ``margin`` wide.
    from sklearn.svm import SVC
    split = linearly_separable(n=300, seed=7, margin=margin)
    x = np.concatenate([split.x_train, split.x_test]).astype(np.float64)
    y = np.concatenate([split.y_train, split.y_test])
    svm = SVC(kernel="linear", C=1e8).fit(x, y)
    assert svm.score(x, y) == 1.0
    assert 2 / np.linalg.norm(svm.coef_) >= margin - 1e-3


def test_linearly_separable_is_deterministic_per_seed():
    a, b, c = (linearly_separable(seed=s) for s in (5, 5, 6))
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a.x_train, c.x_train)


def test_linearly_separable_errors():
    with pytest.raises(ValueError, match="margin"):
        linearly_separable(margin=-0.1)
    with pytest.raises(ValueError, match="test_size"):
        linearly_separable(test_size=1.0)
