"""What the image data sets read from files share: locating the files, transforms, the repr."""
import os
from pathlib import Path

from ..utils.data import Dataset


class ImageDataset(Dataset):
    """A labelled image data set read from files the user already has (``torchvision``'s
    ``VisionDataset`` without downloads).

    Subclasses load ``self.data`` and ``self.targets`` and define ``classes``, ``_image`` and
    ``_target``. Sample ``i`` is ``(transform(image), target_transform(label))``.
    """

    classes: list = []

    def __init__(self, root, train, transform, target_transform, download):
        if download:
            raise ValueError(
                f"{type(self).__name__}: ember never downloads data sets; put the files in "
                f"{os.fspath(root)!r} yourself and leave download=False")
        self.root = os.path.expanduser(root) if isinstance(root, str) else root
        self.train = train
        self.transform = transform
        self.target_transform = target_transform

    @property
    def class_to_idx(self):
        return {name: index for index, name in enumerate(self.classes)}

    def __getitem__(self, index):
        image, target = self._image(index), self._target(index)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        lines = [f"Number of datapoints: {len(self)}", f"Root location: {self.root}",
                 f"Split: {'Train' if self.train else 'Test'}"]
        if self.transform is not None:
            lines.append(f"Transform: {self.transform!r}")
        if self.target_transform is not None:
            lines.append(f"Target transform: {self.target_transform!r}")
        body = "\n".join("    " + line for text in lines for line in text.splitlines())
        return f"Dataset {type(self).__name__}\n{body}"


def find_files(dataset, directories, names, gzipped=True):
    """Map each of ``names`` to its path in the first of ``directories`` that holds them all;
    with ``gzipped``, ``name.gz`` stands in for ``name``.

    Raises:
        FileNotFoundError: no directory holds them all; the message names the files, the
            directories searched, and that ember does not download.
    """
    directories = [Path(d) for d in directories]
    for directory in directories:
        found = {}
        for name in names:
            candidates = [directory / name] + ([directory / f"{name}.gz"] if gzipped else [])
            path = next((path for path in candidates if path.is_file()), None)
            if path is not None:
                found[name] = path
        if len(found) == len(names):
            return found
    either = " (or name.gz)" if gzipped else ""
    raise FileNotFoundError(
        f"{dataset}: expected the files {', '.join(names)}{either} in "
        f"{' or '.join(str(d) for d in directories)}; ember never downloads, so copy them there")
