"""ember.utils.tensorboard.SummaryWriter vs torch.utils.tensorboard's: the same calls write the
same events (tags, steps, values, histogram buckets, image pixels, text), read back with
TensorBoard's own event reader."""
import glob
import io
import os

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")
from PIL import Image  # noqa: E402  (tensorboard brings Pillow)
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader  # noqa: E402
from tensorboard.compat.proto.event_pb2 import Event  # noqa: E402

from ember.utils.tensorboard import SummaryWriter  # noqa: E402


def events(directory):
    """Every event's (step, [(tag, kind, value)]) in the run directory, wall times left out."""
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for record in RawEventFileLoader(path).Load():  # as written (no conversion to tensors)
            event = Event.FromString(record)
            if not event.HasField("summary"):
                continue
            values = []
            for v in event.summary.value:
                kind = v.WhichOneof("value")
                if kind == "simple_value":
                    values.append((v.tag, kind, v.simple_value))
                elif kind == "histo":
                    h = v.histo
                    values.append((v.tag, kind, (h.min, h.max, h.num, h.sum, h.sum_squares,
                                                 list(h.bucket_limit), list(h.bucket))))
                elif kind == "image":
                    pixels = np.asarray(Image.open(io.BytesIO(v.image.encoded_image_string)))
                    values.append((v.tag, kind, (v.image.height, v.image.width, v.image.colorspace, pixels.tolist())))
                else:
                    assert kind == "tensor", kind
                    values.append((v.tag, kind, v.metadata.plugin_data.plugin_name, list(v.tensor.string_val)))
            out.append((event.step, values))
    return out


def write(writer_class, lib, directory):
    rng = np.random.default_rng(0)
    with writer_class(directory) as w:
        for step in range(3):
            w.add_scalar("loss", lib.tensor(1.5 / (step + 1)), step)
            w.add_scalar("lr", 0.1 * step, global_step=step)
        w.add_scalars("run", {"train": 1.0, "test": lib.tensor(2.0)}, 4)
        values = rng.standard_normal(500)
        w.add_histogram("weights", lib.tensor(values), 1)
        w.add_histogram("counts", values, 2, bins=10)
        w.add_histogram("few", lib.tensor([0.5, 0.5, 3.0]), 3, bins="auto")
        w.add_image("float chw", lib.tensor(rng.random((3, 4, 5))), 0)
        w.add_image("uint8 hw", rng.integers(0, 255, (6, 7)).astype(np.uint8), 0, dataformats="HW")
        w.add_images("batch", lib.tensor(rng.random((3, 1, 4, 4))), 0)
        w.add_text("notes", "**hello** ember", 5)


def test_the_same_calls_write_torchs_events(tmp_path):
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    write(TorchWriter, torch, str(tmp_path / "torch"))
    write(SummaryWriter, ember, str(tmp_path / "ember"))
    theirs, ours = events(str(tmp_path / "torch")), events(str(tmp_path / "ember"))
    assert len(ours) == len(theirs) > 10
    assert {v[1] for _, values in ours for v in values} == {"simple_value", "histo", "image", "tensor"}
    for (step_e, values_e), (step_t, values_t) in zip(ours, theirs):
        assert step_e == step_t
        assert len(values_e) == len(values_t)
        for e, t in zip(values_e, values_t):
            assert e[:2] == t[:2]
            if e[1] == "histo":
                np.testing.assert_allclose(e[2][:5], t[2][:5], rtol=1e-12)
                np.testing.assert_allclose(e[2][5], t[2][5], rtol=1e-12)
                assert e[2][6] == t[2][6]
            else:
                assert e[2:] == t[2:]
    for name in ("run_train", "run_test"):  # add_scalars: one run directory per line
        assert events(str(tmp_path / "ember" / name)) == events(str(tmp_path / "torch" / name))


def test_unwritten_kinds_say_so(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.warns(UserWarning, match="does not write model graphs"):
            w.add_graph(ember.nn.Linear(2, 2), ember.ones(1, 2))
        with pytest.raises(NotImplementedError, match="add_hparams"):
            w.add_hparams({"lr": 0.1}, {"loss": 1.0})
        with pytest.raises(AssertionError, match="one element"):
            w.add_scalar("x", ember.ones(2))
    assert glob.glob(str(tmp_path / "events.out.tfevents.*"))
