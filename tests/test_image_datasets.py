"""ember.datasets image readers (MNIST, FashionMNIST, CIFAR10) on tiny files the tests write in
the real formats: contents, layouts, gzip, DataLoader use, and clear errors for missing,
truncated, corrupt and malicious files."""
import gzip
import pickle
import struct

import numpy as np
import pytest

import ember
from ember.datasets import CIFAR10, MNIST, FashionMNIST
from ember.datasets.cifar import read_cifar_batch
from ember.datasets.mnist import read_idx
from ember.utils.data import DataLoader
from ember.vision import transforms

IDX_TYPE_CODES = {"u1": 0x08, "i1": 0x09, ">i2": 0x0B, ">i4": 0x0C, ">f4": 0x0D, ">f8": 0x0E}


def idx_bytes(array):
    """``array`` in the IDX format: magic (0, 0, type, ndim), big-endian dims, big-endian data."""
    dtype = array.dtype.newbyteorder(">") if array.dtype.itemsize > 1 else array.dtype
    code = IDX_TYPE_CODES[dtype.str.lstrip("|")]
    header = struct.pack(f">BBBB{array.ndim}I", 0, 0, code, array.ndim, *array.shape)
    return header + array.astype(dtype).tobytes()


def write_mnist(directory, split, images, labels, gzipped=False):
    directory.mkdir(parents=True, exist_ok=True)
    for kind, array in (("images-idx3", images), ("labels-idx1", labels)):
        data = idx_bytes(array)
        name = f"{split}-{kind}-ubyte"
        if gzipped:
            (directory / f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            (directory / name).write_bytes(data)


@pytest.fixture
def mnist_arrays():
    rng = np.random.default_rng(0)
    return (rng.integers(0, 256, (7, 28, 28), dtype=np.uint8),
            np.array([5, 0, 4, 1, 9, 2, 1], dtype=np.uint8))


@pytest.fixture
def mnist_dir(tmp_path, mnist_arrays):
    images, labels = mnist_arrays
    write_mnist(tmp_path, "train", images, labels)
    write_mnist(tmp_path, "t10k", images[:3], labels[:3], gzipped=True)
    return tmp_path


def test_mnist_reads_train_and_gzipped_test_files(mnist_dir, mnist_arrays):
    images, labels = mnist_arrays
    train, test = MNIST(mnist_dir), MNIST(str(mnist_dir), train=False)
    assert len(train) == 7 and len(test) == 3
    assert train.data.dtype == ember.uint8 and train.data.shape == (7, 28, 28)
    assert train.targets.dtype == ember.int64 and train.targets.tolist() == labels.tolist()
    np.testing.assert_array_equal(test.data.numpy(), images[:3])
    image, target = train[4]
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.shape == (28, 28)
    np.testing.assert_array_equal(image, images[4])
    assert type(target) is int and target == 9
    assert train.classes[9] == "9 - nine" and train.class_to_idx["5 - five"] == 5
    assert repr(test).splitlines() == ["Dataset MNIST", "    Number of datapoints: 3",
                                       f"    Root location: {mnist_dir}", "    Split: Test"]


def test_mnist_with_transforms_in_a_dataloader(mnist_dir, mnist_arrays):
    images, labels = mnist_arrays
    dataset = MNIST(mnist_dir, transform=transforms.ToTensor(), target_transform=lambda y: y + 10)
    batches = list(DataLoader(dataset, batch_size=4))
    x, y = batches[0]
    assert x.shape == (4, 1, 28, 28) and x.dtype == ember.float32
    np.testing.assert_array_equal(x.numpy()[:, 0], images[:4].astype(np.float32) / 255)
    assert y.tolist() == (labels[:4] + 10).tolist()
    assert [len(b[1]) for b in batches] == [4, 3]
    assert "Transform: ToTensor()" in repr(dataset)


def test_torchvision_layout_and_fashion_mnist(tmp_path, mnist_arrays):
    images, labels = mnist_arrays
    write_mnist(tmp_path / "MNIST" / "raw", "train", images, labels, gzipped=True)
    write_mnist(tmp_path / "FashionMNIST" / "raw", "train", images[::-1], labels[::-1])
    assert MNIST(tmp_path)[0][1] == 5
    fashion = FashionMNIST(tmp_path)
    np.testing.assert_array_equal(fashion[0][0], images[-1])
    assert fashion.classes[fashion[0][1]] == "Trouser"
    with pytest.raises(FileNotFoundError, match="FashionMNIST/raw"):
        FashionMNIST(tmp_path, train=False)


def test_missing_files_name_the_expected_files(tmp_path, mnist_arrays):
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte "
                                                 r"\(or name.gz\).*never downloads"):
        MNIST(tmp_path, train=False)
    images, labels = mnist_arrays
    write_mnist(tmp_path, "train", images, labels)
    (tmp_path / "train-labels-idx1-ubyte").unlink()
    with pytest.raises(FileNotFoundError, match="train-labels-idx1-ubyte"):
        MNIST(tmp_path)


def test_download_is_refused(tmp_path):
    for dataset in (MNIST, FashionMNIST, CIFAR10):
        with pytest.raises(ValueError, match="ember never downloads"):
            dataset(tmp_path, download=True)


@pytest.mark.parametrize("dtype", ["u1", "i1", ">i2", ">i4", ">f4", ">f8"])
def test_read_idx_every_type_in_native_order(tmp_path, dtype):
    array = (np.arange(24).reshape(2, 3, 4) - 5).astype(dtype)
    path = tmp_path / "x.idx"
    path.write_bytes(idx_bytes(array))
    read = read_idx(path)
    np.testing.assert_array_equal(read, array)
    assert read.dtype.isnative and read.flags.writeable


@pytest.mark.parametrize("gzipped", [False, True])
def test_truncated_idx_file_is_a_clear_error(mnist_dir, gzipped):
    name = "train-images-idx3-ubyte"
    data = (mnist_dir / name).read_bytes()
    (mnist_dir / name).unlink()
    cut = data[:-100]
    (mnist_dir / (name + ".gz" if gzipped else name)).write_bytes(
        gzip.compress(cut) if gzipped else cut)
    with pytest.raises(ValueError, match=r"truncated or corrupt"):
        MNIST(mnist_dir)


def test_corrupt_idx_files_are_clear_errors(tmp_path, mnist_arrays):
    images, labels = mnist_arrays
    path = tmp_path / "x"
    cases = {
        b"": "not an IDX file",
        b"\x01\x00\x08\x01": "not an IDX file",
        b"\x00\x00\x07\x01": "not an IDX file",
        b"\x00\x00\x08\x03\x00\x00": "truncated IDX header",
        idx_bytes(labels) + b"\x00": "truncated or corrupt",
        gzip.compress(idx_bytes(labels))[:-12]: "damaged or truncated gzip",
    }
    for data, message in cases.items():
        path.write_bytes(data)
        with pytest.raises(ValueError, match=message):
            read_idx(path)


def test_inconsistent_mnist_files_are_clear_errors(tmp_path, mnist_arrays):
    images, labels = mnist_arrays
    write_mnist(tmp_path, "train", images, labels[:-1])
    with pytest.raises(ValueError, match="expected 7 labels"):
        MNIST(tmp_path)
    write_mnist(tmp_path, "train", images, np.array([0, 1, 2, 3, 4, 5, 10], np.uint8))
    with pytest.raises(ValueError, match="label 10 is not one of the 10 class indices"):
        MNIST(tmp_path)
    write_mnist(tmp_path, "train", images.reshape(7, -1), labels)
    with pytest.raises(ValueError, match=r"expected uint8 images \(N, H, W\)"):
        MNIST(tmp_path)


def cifar_rows(count, seed):
    return np.random.default_rng(seed).integers(0, 256, (count, 3072), dtype=np.uint8)


def write_cifar(directory, count=4, protocol=pickle.HIGHEST_PROTOCOL):
    """Five training batches and a test batch of ``count`` images each; returns their arrays."""
    directory.mkdir(parents=True, exist_ok=True)
    batches = {}
    for seed, name in enumerate([f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]):
        rows, labels = cifar_rows(count, seed), [(seed + i) % 10 for i in range(count)]
        with open(directory / name, "wb") as file:
            pickle.dump({b"batch_label": name.encode(), b"data": rows, b"labels": labels,
                         b"filenames": [b"x.png"] * count}, file, protocol=protocol)
        batches[name] = rows, labels
    return batches


def python2_cifar_pickle(rows, labels):
    """The bytes Python 2's cPickle wrote for the published batches (protocol 2): ``str`` keys,
    the ``numpy.core`` module path, the pixels as one ``str``."""
    def string(value):
        if len(value) < 256:
            return b"U" + bytes([len(value)]) + value
        return b"T" + struct.pack("<i", len(value)) + value

    def integer(value):
        return b"K" + bytes([value]) if value < 256 else b"M" + struct.pack("<H", value)

    dtype = (b"cnumpy\ndtype\n" + string(b"u1") + b"K\x00K\x01\x87R"
             b"(K\x03" + string(b"|") + b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb")
    array = (b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85" + string(b"b")
             + b"\x87R(K\x01" + integer(rows.shape[0]) + integer(rows.shape[1]) + b"\x86" + dtype
             + b"\x89" + string(rows.tobytes()) + b"tb")
    label_list = b"](" + b"".join(integer(label) for label in labels) + b"e"
    return b"\x80\x02}(" + string(b"data") + array + string(b"labels") + label_list + b"u."


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_cifar10_reads_the_batches(tmp_path, protocol):
    batches = write_cifar(tmp_path / "cifar-10-batches-py", protocol=protocol)
    train, test = CIFAR10(tmp_path), CIFAR10(tmp_path, train=False)
    assert len(train) == 20 and len(test) == 4
    assert train.data.shape == (20, 32, 32, 3) and train.data.dtype == np.uint8
    rows, labels = batches["data_batch_2"]
    image, target = train[4 + 1]
    assert image.shape == (32, 32, 3) and type(target) is int and target == labels[1]
    for channel in range(3):  # a row holds the red, green and blue planes in turn
        np.testing.assert_array_equal(image[:, :, channel],
                                      rows[1, 1024 * channel:1024 * (channel + 1)].reshape(32, 32))
    assert test.targets == batches["test_batch"][1]
    assert test.classes[3] == "cat" and test.class_to_idx["truck"] == 9


def test_cifar10_files_in_root_and_the_published_python2_format(tmp_path):
    rows = cifar_rows(3, 0)
    (tmp_path / "test_batch").write_bytes(python2_cifar_pickle(rows, [7, 0, 9]))
    assert pickle.loads(python2_cifar_pickle(rows, [7, 0, 9]), encoding="latin1")["labels"] == [7, 0, 9]
    test = CIFAR10(tmp_path, train=False, transform=transforms.ToTensor())
    x, y = next(iter(DataLoader(test, batch_size=3)))
    assert x.shape == (3, 3, 32, 32) and x.dtype == ember.float32 and y.tolist() == [7, 0, 9]
    np.testing.assert_array_equal(x.numpy().reshape(3, -1), rows.astype(np.float32) / 255)


def test_cifar10_missing_batch_names_the_files(tmp_path):
    write_cifar(tmp_path)
    (tmp_path / "data_batch_3").unlink()
    with pytest.raises(FileNotFoundError, match="data_batch_1, data_batch_2, data_batch_3"):
        CIFAR10(tmp_path)
    assert len(CIFAR10(tmp_path, train=False)) == 4


def test_truncated_cifar_batch_is_a_clear_error(tmp_path):
    write_cifar(tmp_path)
    path = tmp_path / "data_batch_4"
    path.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(ValueError, match="data_batch_4: not a readable CIFAR-10 batch"):
        CIFAR10(tmp_path)


class Payload:
    """Unpickling this runs ``exec``: it creates the file ``marker``."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').close()",)


def test_malicious_cifar_pickle_runs_no_code(tmp_path):
    marker = tmp_path / "pwned"
    rows = cifar_rows(2, 0)
    for batch in ({b"data": rows, b"labels": [0, 1], b"filenames": Payload(marker)},
                  Payload(marker)):
        (tmp_path / "test_batch").write_bytes(pickle.dumps(batch))
        with pytest.raises(ValueError, match="refusing global builtins.exec"):
            CIFAR10(tmp_path, train=False)
        assert not marker.exists()
    pickle.loads((tmp_path / "test_batch").read_bytes())  # the payload is live: plain pickle runs it
    assert marker.exists()


def test_cifar_pickle_tricks_within_numpy_are_refused(tmp_path):
    path = tmp_path / "batch"
    object_array = np.array([1, "x"], dtype=object)
    path.write_bytes(pickle.dumps({b"data": object_array, b"labels": [0, 1]}, protocol=2))
    with pytest.raises(ValueError, match="'data' must be a uint8 array .* got object array"):
        read_cifar_batch(path)
    codec = pickle.dumps({b"data": b"abc"}, protocol=2).replace(b"latin1", b"base64")
    path.write_bytes(codec)
    with pytest.raises(ValueError, match="refusing _codecs.encode with encoding 'base64'"):
        read_cifar_batch(path)


def test_malformed_cifar_batches_are_clear_errors(tmp_path):
    path = tmp_path / "batch"
    cases = [
        ([1, 2], "a CIFAR-10 batch is a dict, got list"),
        ({b"labels": [0]}, "'data' must be a uint8 array"),
        ({b"data": cifar_rows(2, 0).astype(np.int16), b"labels": [0, 1]}, "int16 array"),
        ({b"data": cifar_rows(2, 0)[:, :100], b"labels": [0, 1]}, r"\(N, 3072\)"),
        ({b"data": cifar_rows(2, 0), b"labels": [0]}, "'labels' must be 2 integers"),
        ({b"data": cifar_rows(2, 0), b"labels": ["a", "b"]}, "'labels' must be 2 integers"),
        ({b"data": cifar_rows(2, 0), b"labels": [0, 10]}, "labels must lie in 0-9"),
    ]
    for batch, message in cases:
        path.write_bytes(pickle.dumps(batch))
        with pytest.raises(ValueError, match=message):
            read_cifar_batch(path)
