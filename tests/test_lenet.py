"""The lenet milestone (1998): LeNet-5 against torch's, the digits as 32×32 images, the fast run
meeting its threshold, and --data-dir on generated MNIST and CIFAR-10 files."""
import gzip
import pickle
import struct

import numpy as np
import pytest
import torch

import ember
from ember import milestones
from ember.cli import main
from ember.milestones import lenet


def test_fast_run_reads_the_digits():
    result = milestones.get("lenet").run(fast=True, quiet=True)
    accuracy = result.metrics["test accuracy"]
    assert accuracy >= 0.97, accuracy
    assert result.passed
    history = result.histories["LeNet-5 on scikit-learn digits"]
    assert len(history.accuracy) == lenet.DIGITS.fast_epochs == 6
    assert history.loss[-1] < history.loss[0] / 4


def torch_lenet5(in_channels):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(in_channels, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


@pytest.mark.parametrize("in_channels, parameters", [(1, 61706), (3, 62006)])
def test_lenet5_matches_torch(in_channels, parameters):
    ember.manual_seed(0)
    model, reference = lenet.lenet5(in_channels), torch_lenet5(in_channels)
    assert list(model.state_dict()) == list(reference.state_dict())
    assert sum(p.numel() for p in model.parameters()) == parameters
    reference.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, in_channels, 32, 32), dtype=np.float32)
    out = model(ember.from_numpy(x))
    assert out.shape == (4, 10)
    np.testing.assert_allclose(out.detach().numpy(), reference(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_digits_become_32x32_blocks():
    from ember.datasets import load_digits
    digits = lenet.BlockDigits(train=False, transform=None, seed=0)
    counts = np.rint(load_digits(flatten=False).x_test[:, 0] * 16)
    assert digits.data.shape == (360, 32, 32) and digits.data.dtype == np.uint8
    image, label = digits[5]
    assert type(label) is int and label == load_digits().y_test[5]
    blocks = image.reshape(8, 4, 8, 4)
    assert (blocks == blocks[:, :1, :, :1]).all()  # constant over each 4×4 block
    np.testing.assert_array_equal(blocks[:, 0, :, 0], np.rint(counts[5] * 255 / 16))


def test_channel_statistics_are_exact():
    images = np.random.default_rng(0).integers(0, 256, (5, 4, 4, 3), dtype=np.uint8)
    means, stds = lenet.channel_statistics(images)
    scaled = images.astype(np.float64) / 255
    np.testing.assert_allclose(means, scaled.mean(axis=(0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(stds, scaled.std(axis=(0, 1, 2)), rtol=1e-12)
    grey_mean, grey_std = lenet.channel_statistics(images[..., 0])
    assert grey_mean == means[:1] and grey_std == stds[:1]


def touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def test_data_dir_is_recognised_by_file_names(tmp_path):
    cases = [
        ("a/cifar-10-batches-py/data_batch_1", "a", "CIFAR-10", 3, 0.55),
        ("b/data_batch_1", "b", "CIFAR-10", 3, 0.55),
        ("c/train-images-idx3-ubyte.gz", "c", "MNIST", 1, 0.98),
        ("d/MNIST/raw/train-images-idx3-ubyte", "d", "MNIST", 1, 0.98),
        ("e/FashionMNIST/raw/train-images-idx3-ubyte", "e", "Fashion-MNIST", 1, 0.85),
        ("my-fashion/train-images-idx3-ubyte", "my-fashion", "Fashion-MNIST", 1, 0.85),
    ]
    for file, root, name, channels, threshold in cases:
        touch(tmp_path / file)
        data = lenet.find_image_data(tmp_path / root)
        assert (data.name, data.channels, data.threshold) == (name, channels, threshold), file
        m = lenet.milestone(tmp_path / root)
        assert m.name == "lenet" and m.thresholds[0].bound == threshold and name in m.story
    with pytest.raises(FileNotFoundError, match="neither CIFAR-10 batches .* nor MNIST-format files"):
        lenet.milestone(tmp_path)


def write_idx(path, array):
    header = struct.pack(f">BBBB{array.ndim}I", 0, 0, 0x08, array.ndim, *array.shape)
    path.write_bytes(gzip.compress(header + array.tobytes()))


def test_data_dir_trains_on_mnist_files_from_the_command_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    for split, count in (("train", 96), ("t10k", 32)):
        labels = rng.integers(0, 10, count, dtype=np.uint8)
        images = np.zeros((count, 28, 28), np.uint8)
        for image, label in zip(images, labels):  # a bar whose height says the class
            image[2 + 2 * label:4 + 2 * label, 4:24] = 255
        write_idx(tmp_path / f"{split}-images-idx3-ubyte.gz", images)
        write_idx(tmp_path / f"{split}-labels-idx1-ubyte.gz", labels)
    status = main(["milestones", "run", "lenet", "--data-dir", str(tmp_path), "--fast", "--quiet",
                   "--plot", str(tmp_path / "plots")])
    out = capsys.readouterr().out
    row = out.splitlines()[2].split()
    assert row[:2] == ["lenet", "test"] and row[4:6] == [">=", "0.98"]
    assert status == (0 if float(row[3]) >= 0.98 else 1)
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == ["lenet-accuracy.png", "lenet-loss.png"]


def test_data_dir_trains_on_cifar_batches(tmp_path):
    rng = np.random.default_rng(0)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {b"data": rng.integers(0, 256, (16, 3072), dtype=np.uint8),
                 b"labels": rng.integers(0, 10, 16).tolist()}
        (tmp_path / name).write_bytes(pickle.dumps(batch))
    result = lenet.milestone(tmp_path).run(fast=True, quiet=True)
    history = result.histories["LeNet-5 on CIFAR-10"]
    assert len(history.loss) == 2 and all(np.isfinite(history.loss))
    assert 0.0 <= result.metrics["test accuracy"] <= 1.0


def test_data_dir_needs_the_lenet_milestone(tmp_path, capsys):
    touch(tmp_path / "data_batch_1")
    with pytest.raises(SystemExit) as exit_info:
        main(["milestones", "run", "xor", "--data-dir", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "--data-dir applies to the lenet milestone" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["milestones", "run", "lenet", "--data-dir", str(tmp_path / "missing")])
    assert "found neither CIFAR-10 batches" in capsys.readouterr().err
