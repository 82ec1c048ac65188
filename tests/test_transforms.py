"""ember.vision.transforms against hand-computed values and torchvision's definitions (written
with real torch: torchvision is not installed), and their determinism under manual_seed."""
import numpy as np
import pytest
import torch

import ember
import ember.vision as torchvision
from ember.vision import transforms


def test_vision_namespace_maps_torchvision():
    assert torchvision.transforms is transforms
    assert torchvision.datasets.MNIST is ember.datasets.MNIST


def test_to_tensor_scales_uint8_to_chw_float32():
    hwc = np.arange(24, dtype=np.uint8).reshape(2, 4, 3) * 10
    out = transforms.ToTensor()(hwc)
    assert out.shape == (3, 2, 4) and out.dtype == ember.float32
    expected = torch.from_numpy(hwc).permute(2, 0, 1).float().div(255)  # torchvision's rule
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert out[1, 0, 2].item() == np.float32(70) / np.float32(255)
    hwc[0, 0, 0] = 99
    assert out[0, 0, 0].item() == 0.0


def test_to_tensor_grey_and_non_uint8():
    grey = transforms.ToTensor()(np.full((28, 28), 255, dtype=np.uint8))
    assert grey.shape == (1, 28, 28) and grey.min().item() == grey.max().item() == 1.0
    floats = transforms.ToTensor()(np.full((2, 3, 1), 7.5))
    assert floats.dtype == ember.float64 and floats.shape == (1, 2, 3)
    assert floats.max().item() == 7.5


def test_to_tensor_follows_the_default_dtype():
    ember.set_default_dtype(ember.float64)
    try:
        assert transforms.ToTensor()(np.zeros((2, 2), np.uint8)).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


def test_to_tensor_errors():
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        transforms.ToTensor()(ember.zeros(1, 2, 2))
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        transforms.ToTensor()([[1, 2]])
    with pytest.raises(ValueError, match="pic should be 2/3 dimensional. Got 4 dimensions."):
        transforms.ToTensor()(np.zeros((1, 2, 2, 3), np.uint8))


def test_normalize_per_channel():
    x = ember.tensor([[[0.0, 0.5]], [[1.0, 0.25]]])
    out = transforms.Normalize((0.5, 0.25), (0.5, 0.25))(x)
    assert out.tolist() == [[[-1.0, 0.0]], [[3.0, 0.0]]]
    assert x.tolist() == [[[0.0, 0.5]], [[1.0, 0.25]]]
    batch = ember.ones(4, 2, 3, 3)
    assert transforms.Normalize(0.5, 0.25)(batch).unique().tolist() == [2.0]
    inplace = transforms.Normalize((0.5, 0.25), (0.5, 0.25), inplace=True)
    assert inplace(x) is x and x.tolist() == [[[-1.0, 0.0]], [[3.0, 0.0]]]
    assert repr(inplace) == "Normalize(mean=(0.5, 0.25), std=(0.5, 0.25))"


def test_normalize_follows_changed_constants_and_dtypes():
    normalize = transforms.Normalize([0.5], [0.5])
    assert normalize(ember.ones(1, 1, 1)).item() == 1.0
    normalize.mean[0] = 0.0
    assert normalize(ember.ones(1, 1, 1)).item() == 2.0
    normalize.std = ember.tensor([4.0])
    assert normalize(ember.ones(1, 1, 1)).item() == 0.25
    out = normalize(ember.ones(1, 1, 1, dtype=ember.float64))
    assert out.dtype == ember.float64 and out.item() == 0.25


def test_normalize_matches_torch_arithmetic():
    rng = np.random.default_rng(0)
    x = rng.random((2, 3, 5, 5), dtype=np.float32)
    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    out = transforms.Normalize(mean, std)(ember.from_numpy(x))
    expected = (torch.from_numpy(x) - torch.tensor(mean).view(-1, 1, 1)) / torch.tensor(std).view(-1, 1, 1)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_normalize_errors():
    normalize = transforms.Normalize((0.5,), (0.5,))
    with pytest.raises(TypeError, match="Input tensor should be a float tensor. Got torch.uint8."):
        normalize(ember.zeros(1, 2, 2, dtype=ember.uint8))
    with pytest.raises(ValueError, match=r"size \(\.\.\., C, H, W\)"):
        normalize(ember.zeros(2, 2))
    with pytest.raises(TypeError, match="img should be Tensor Image"):
        normalize(np.zeros((1, 2, 2), np.float32))
    with pytest.raises(ValueError, match="std evaluated to zero after conversion to torch.float32"):
        transforms.Normalize((0.0,), (1e-50,))(ember.zeros(1, 2, 2))


ROW = np.array([[1, 2, 3]], dtype=np.uint8)


@pytest.mark.parametrize("mode, expected", [
    ("constant", [9, 9, 1, 2, 3, 9]),
    ("edge", [1, 1, 1, 2, 3, 3]),
    ("reflect", [3, 2, 1, 2, 3, 2]),
    ("symmetric", [2, 1, 1, 2, 3, 3]),
])
def test_pad_modes_on_arrays_and_tensors(mode, expected):
    pad = transforms.Pad((2, 0, 1, 0), fill=9, padding_mode=mode)
    array = pad(ROW)
    assert isinstance(array, np.ndarray) and array.tolist() == [expected]
    tensor = pad(ember.from_numpy(ROW).view(1, 1, 3))
    assert tensor.shape == (1, 1, 6) and tensor.tolist() == [[expected]]


def test_pad_matches_torch_pad_on_images():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    for mode, torch_mode in (("constant", "constant"), ("edge", "replicate"), ("reflect", "reflect")):
        out = transforms.Pad((1, 2, 3, 1), padding_mode=mode)(ember.from_numpy(x))
        expected = torch.nn.functional.pad(torch.from_numpy(x), (1, 3, 2, 1), mode=torch_mode)
        np.testing.assert_array_equal(out.numpy(), expected.numpy())
    hwc = transforms.Pad(2)(np.ones((3, 4, 3), np.uint8))
    assert hwc.shape == (7, 8, 3) and hwc.sum() == 36


def test_pad_argument_errors():
    with pytest.raises(ValueError, match="Padding must be an int or a 1, 2, or 4 element tuple, not a 3"):
        transforms.Pad((1, 2, 3))
    with pytest.raises(TypeError, match="inappropriate padding"):
        transforms.Pad("1")
    with pytest.raises(ValueError, match="padding must be non-negative"):
        transforms.RandomCrop(4, padding=(1, -1))
    with pytest.raises(ValueError, match="Padding mode should be either constant, edge, reflect or symmetric"):
        transforms.Pad(1, padding_mode="wrap")
    with pytest.raises(TypeError, match="fill must be a number"):
        transforms.RandomCrop(4, padding=1, fill=(1, 2, 3))
    assert repr(transforms.Pad(2)) == "Pad(padding=2, fill=0, padding_mode=constant)"


def crop_positions(crop, image, draws):
    """The (top, left) of each of ``draws`` crops, found by matching against ``image``."""
    positions = []
    height, width = crop.size
    for _ in range(draws):
        out = crop(image)
        matches = [(top, left) for top in range(image.shape[0] - height + 1)
                   for left in range(image.shape[1] - width + 1)
                   if np.array_equal(image[top:top + height, left:left + width], out)]
        assert len(matches) == 1
        positions.append(matches[0])
    return positions


def test_random_crop_is_a_uniform_window_of_the_padded_image():
    image = np.arange(36, dtype=np.uint8).reshape(6, 6)
    ember.manual_seed(0)
    positions = crop_positions(transforms.RandomCrop(5), np.pad(image, 1), 400)
    assert set(positions) == {(t, l) for t in range(4) for l in range(4)}
    assert max(positions.count(p) for p in set(positions)) < 400 / 16 * 2
    out = transforms.RandomCrop(5, padding=1)(image)
    assert out.shape == (5, 5) and out.dtype == np.uint8


def test_random_crop_is_reproducible_and_agrees_across_forms():
    hwc = np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    crop = transforms.RandomCrop(32, padding=4)
    ember.manual_seed(7)
    first = [crop(hwc) for _ in range(5)]
    ember.manual_seed(7)
    again = [crop(hwc) for _ in range(5)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(first[0], other) for other in first[1:])
    ember.manual_seed(7)
    chw = [crop(ember.from_numpy(hwc).permute(2, 0, 1)) for _ in range(5)]
    assert all(np.array_equal(a, b.numpy().transpose(1, 2, 0)) for a, b in zip(first, chw))
    assert repr(crop) == "RandomCrop(size=(32, 32), padding=4)"


def test_random_crop_sizes_and_pad_if_needed():
    ember.manual_seed(0)
    out = transforms.RandomCrop((2, 3))(ember.arange(20.0).view(1, 4, 5))
    assert out.shape == (1, 2, 3)
    assert transforms.RandomCrop(4)(np.ones((4, 4), np.uint8)).tolist() == np.ones((4, 4)).tolist()
    padded = transforms.RandomCrop((5, 6), pad_if_needed=True, fill=7)(np.ones((3, 6), np.uint8))
    assert padded.shape == (5, 6) and (padded == 7).sum() == 5 * 6 - 3 * 6
    with pytest.raises(ValueError, match=r"Required crop size \(5, 5\) is larger than input image size \(4, 4\)"):
        transforms.RandomCrop(5)(np.ones((4, 4), np.uint8))
    with pytest.raises(ValueError, match="only two dimensions"):
        transforms.RandomCrop((1, 2, 3))


def test_random_horizontal_flip():
    image = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.uint8)
    assert transforms.RandomHorizontalFlip(p=1.0)(image).tolist() == [[3, 2, 1], [6, 5, 4]]
    assert transforms.RandomHorizontalFlip(p=0.0)(image) is image
    tensor = transforms.RandomHorizontalFlip(p=1.0)(ember.from_numpy(image).view(1, 2, 3))
    assert tensor.tolist() == [[[3, 2, 1], [6, 5, 4]]]
    hwc = np.arange(12).reshape(2, 2, 3)
    np.testing.assert_array_equal(transforms.RandomHorizontalFlip(1.0)(hwc), hwc[:, ::-1])
    flip = transforms.RandomHorizontalFlip()
    ember.manual_seed(3)
    flips = [flip(image)[0, 0] == 3 for _ in range(1000)]
    ember.manual_seed(3)
    assert flips == [flip(image)[0, 0] == 3 for _ in range(1000)]
    assert 450 < sum(flips) < 550
    assert repr(flip) == "RandomHorizontalFlip(p=0.5)"


def test_compose_applies_in_order_and_lambda():
    pipeline = transforms.Compose([transforms.ToTensor(), transforms.Lambda(lambda x: x * 2),
                                   transforms.Normalize((1.0,), (2.0,))])
    out = pipeline(np.array([[0, 255]], dtype=np.uint8))
    assert out.tolist() == [[[-0.5, 0.5]]]
    assert repr(pipeline) == ("Compose(\n    ToTensor()\n    Lambda()\n"
                              "    Normalize(mean=(1.0,), std=(2.0,))\n)")
    with pytest.raises(TypeError, match="lambd should be callable"):
        transforms.Lambda(3)
