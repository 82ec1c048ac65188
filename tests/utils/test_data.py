"""ember.utils.data compared with torch.utils.data: collation, samplers, datasets, DataLoader
batching and options (single process; worker processes are in test_dataloader_workers.py)."""
import collections
import re
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as td

import ember
import ember.utils.data as ed

Point = collections.namedtuple("Point", ["x", "y"])


def same(e, t):
    """ember structure ``e`` matches torch structure ``t``: container types, tensor dtypes,
    shapes, values and requires_grad, and plain values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{type(e)} is not a Tensor (torch has {t})"
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
        assert tuple(e.shape) == tuple(t.shape)
        assert e.requires_grad == t.requires_grad
        np.testing.assert_array_equal(np.asarray(e.detach()._data), t.detach().numpy())
    elif isinstance(t, (dict, list, tuple)):
        assert type(e) is type(t), f"{type(e)} != {type(t)}"
        assert len(e) == len(t)
        if isinstance(t, dict):
            assert list(e) == list(t)
            for k in t:
                same(e[k], t[k])
        else:
            for a, b in zip(e, t):
                same(a, b)
    else:
        assert type(e) is type(t) and e == t, (e, t)


def batch_of(lib):
    """One nested sample structure per index, built from ``lib``'s tensors."""
    return [{"t": lib.tensor([i, i + 1.0]),
             "grad": lib.tensor([float(i)], requires_grad=True),
             "np": np.arange(3, dtype=np.int32) + i,
             "np_scalars": (np.float64(i / 2), np.int32(i), np.bool_(i % 2)),
             "py": [float(i), i, bool(i % 2), f"s{i}", b"b"],
             "point": Point(lib.tensor(i), i * 0.5),
             "nested": {"deep": [(lib.ones(2, dtype=lib.int64) * i, "x")]}}
            for i in range(3)]


def test_default_collate_matches_torch_on_nested_structures():
    same(ed.default_collate(batch_of(ember)), td.default_collate(batch_of(torch)))


def test_default_collate_tuple_samples_become_a_list_of_batches():
    e = ed.default_collate([(ember.tensor([1, 2]), 0), (ember.tensor([3, 4]), 1)])
    t = td.default_collate([(torch.tensor([1, 2]), 0), (torch.tensor([3, 4]), 1)])
    same(e, t)
    assert isinstance(e, list)


def test_default_collate_keeps_namedtuple_and_dict_types():
    e = ed.default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(e) is Point and e.x.dtype is ember.int64 and e.y.dtype is ember.float64
    od = ed.default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
    assert type(od) is collections.OrderedDict


@pytest.mark.parametrize("make", [
    lambda lib: [[1, 2], [3]],                                    # sequences of different lengths
    lambda lib: [lib.zeros(2), lib.zeros(3)],                     # tensors of different sizes
    lambda lib: [object(), object()],                              # no collate rule
    lambda lib: [np.array(["a"]), np.array(["b"])],               # string arrays
])
def test_default_collate_errors_match_torch(make):
    with pytest.raises(Exception) as t_err:
        td.default_collate(make(torch))
    with pytest.raises(t_err.type) as e_err:
        ed.default_collate(make(ember))
    t_msg = str(t_err.value).replace("torch.", "ember.")
    if "found <class" in t_msg or "stack expects" in t_msg or "equal size" in t_msg:
        assert str(e_err.value) == t_msg
    else:
        assert str(e_err.value).split(";")[0] == t_msg.split(";")[0]


def test_default_collate_stacking_follows_dtype_promotion_and_grad():
    e = ed.default_collate([ember.tensor([1.0]), ember.tensor([2.0], dtype=ember.float64)])
    t = td.default_collate([torch.tensor([1.0]), torch.tensor([2.0], dtype=torch.float64)])
    same(e, t)
    w = ember.ones(2, requires_grad=True)
    out = ed.default_collate([w, w * 2])
    out.sum().backward()
    np.testing.assert_array_equal(w.grad._data, [3.0, 3.0])


def test_default_convert_matches_torch():
    def sample(lib):
        return {"a": np.arange(3.0), "b": (np.int64(4), 1.5), "c": Point(np.zeros(2), "s"),
                "d": [np.array(["x"]), lib.tensor(2)], "e": 7}
    same(ed.default_convert(sample(ember)), td.default_convert(sample(torch)))


# ---- samplers ----------------------------------------------------------------------------

@pytest.mark.parametrize("n,batch_size,drop_last", [(10, 3, False), (10, 3, True), (9, 3, True),
                                                     (2, 5, False), (2, 5, True), (7, 1, False)])
def test_batch_sampler_matches_torch(n, batch_size, drop_last):
    e = ed.BatchSampler(ed.SequentialSampler(range(n)), batch_size, drop_last)
    t = td.BatchSampler(td.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(e) == list(t)
    assert len(e) == len(t)


@pytest.mark.parametrize("make", [
    lambda lib: lib.BatchSampler(range(4), 0, False),
    lambda lib: lib.BatchSampler(range(4), True, False),
    lambda lib: lib.BatchSampler(range(4), 2, 1),
    lambda lib: lib.RandomSampler(range(4), replacement=1),
    lambda lib: lib.RandomSampler(range(4), num_samples=0),
    lambda lib: lib.RandomSampler([], replacement=False),
    lambda lib: lib.WeightedRandomSampler([1.0, 2.0], 0),
    lambda lib: lib.WeightedRandomSampler([1.0, 2.0], 2, replacement=None),
    lambda lib: lib.WeightedRandomSampler([[1.0, 2.0]], 2),
])
def test_sampler_argument_errors_match_torch(make):
    with pytest.raises(Exception) as t_err:
        make(td)
    with pytest.raises(t_err.type, match=re.escape(str(t_err.value))):
        make(ed)


def test_sequential_and_random_samplers():
    assert list(ed.SequentialSampler(range(5))) == list(td.SequentialSampler(range(5)))
    order = list(ed.RandomSampler(range(50)))
    assert sorted(order) == list(range(50)) and order != list(range(50))
    g = ember.Generator().manual_seed(3)
    first = list(ed.RandomSampler(range(50), generator=g))
    assert first != list(ed.RandomSampler(range(50), generator=g))  # the stream advances
    assert first == list(ed.RandomSampler(range(50), generator=ember.Generator().manual_seed(3)))
    more = list(ed.RandomSampler(range(5), num_samples=12))
    assert len(more) == 12 and sorted(more[:5]) == sorted(more[5:10]) == list(range(5))
    drawn = list(ed.RandomSampler(range(3), replacement=True, num_samples=100))
    assert len(drawn) == 100 and set(drawn) == {0, 1, 2}
    assert len(ed.RandomSampler(range(3), replacement=True, num_samples=7)) == 7


def test_subset_and_weighted_samplers():
    indices = [5, 9, 11, 20]
    s = ed.SubsetRandomSampler(indices)
    assert sorted(s) == indices and len(s) == 4
    w = ed.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200)
    drawn = list(w)
    assert len(w) == len(drawn) == 200 and set(drawn) == {1, 3}
    assert drawn.count(3) > drawn.count(1)
    once = list(ed.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False))
    assert sorted(once) == [0, 1, 2]


# ---- datasets -------------------------------------------------------------------------

def test_tensor_dataset_and_size_mismatch():
    x, y = ember.arange(12.0).reshape(6, 2), ember.arange(6)
    ds = ed.TensorDataset(x, y)
    assert len(ds) == 6
    same(ds[4], td.TensorDataset(torch.arange(12.0).reshape(6, 2), torch.arange(6))[4])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        ed.TensorDataset(x, ember.arange(5))


def test_concat_subset_stack_datasets_match_torch():
    def build(lib, data):
        a = data.TensorDataset(lib.arange(4))
        b = data.TensorDataset(lib.arange(10, 13))
        return a + b, data.Subset(a + b, [6, 0, 3]), data.StackDataset(a, a), data.StackDataset(p=a, q=a)
    e, t = build(ember, ed), build(torch, td)
    for de, dt in zip(e, t):
        assert len(de) == len(dt)
        for i in range(len(dt)):
            same(de[i], dt[i])
    same(e[0][-1], t[0][-1])
    same(e[0].cumulative_sizes, t[0].cumulative_sizes)
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        e[0][-8]
    same(e[3].__getitems__([1, 2]), t[3].__getitems__([1, 2]))


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.5], [1 / 3] * 3, [0.25] * 4, [0.6, 0.4, 0.0]])
def test_random_split_lengths_match_torch(lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = ed.random_split(range(10), lengths, generator=ember.Generator().manual_seed(0))
        t = td.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in e] == [len(s) for s in t]
    assert sorted(i for s in e for i in s) == list(range(10))


def test_random_split_errors_and_reproducibility():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        ed.random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):  # checked in order
        ed.random_split(range(10), [0.5, 1.5, -1.0])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        ed.random_split(range(3), [1.0, 0.0])
    ember.manual_seed(7)
    a = [list(s) for s in ed.random_split(range(20), [5, 15])]
    ember.manual_seed(7)
    assert a == [list(s) for s in ed.random_split(range(20), [5, 15])]


# ---- DataLoader -------------------------------------------------------------------------

class Rows(ed.Dataset):
    """A map-style dataset without the TensorDataset fast path."""

    def __init__(self, *tensors):
        self.tensors = tensors

    def __len__(self):
        return len(self.tensors[0])

    def __getitem__(self, i):
        return tuple(t[i] for t in self.tensors)


def data(lib, n=23):
    x = lib.arange(n * 3, dtype=lib.float32).reshape(n, 3)
    return x, lib.arange(n) % 4


@pytest.mark.parametrize("kwargs", [dict(batch_size=5), dict(batch_size=5, drop_last=True),
                                    dict(batch_size=23), dict(batch_size=None), dict(batch_size=1)])
def test_dataloader_batches_match_torch(kwargs):
    e_loader = ed.DataLoader(ed.TensorDataset(*data(ember)), **kwargs)
    t_loader = td.DataLoader(td.TensorDataset(*data(torch)), **kwargs)
    assert len(e_loader) == len(t_loader)
    same(list(e_loader), list(t_loader))


def test_dataloader_collates_dict_samples_like_torch():
    class Dicts:
        def __init__(self, lib):
            self.lib = lib

        def __len__(self):
            return 7

        def __getitem__(self, i):
            return {"x": self.lib.ones(2) * i, "label": i % 2, "name": f"n{i}", "w": i / 4}
    same(list(ed.DataLoader(Dicts(ember), batch_size=3)), list(td.DataLoader(Dicts(torch), batch_size=3)))


@pytest.mark.parametrize("wrap", [lambda ds: ds, lambda ds: ed.Subset(ds, list(range(22, -1, -2)))])
def test_tensor_dataset_fast_path_equals_per_sample_collation(wrap):
    fast = wrap(ed.TensorDataset(*data(ember)))
    slow = wrap(Rows(*data(ember)))
    for kwargs in (dict(batch_size=4, shuffle=True), dict(batch_size=4, drop_last=True)):
        a = list(ed.DataLoader(fast, generator=ember.Generator().manual_seed(1), **kwargs))
        b = list(ed.DataLoader(slow, generator=ember.Generator().manual_seed(1), **kwargs))
        assert len(a) == len(b)
        for (xa, ya), (xb, yb) in zip(a, b):
            for p, q in ((xa, xb), (ya, yb)):
                assert p.dtype is q.dtype and p.shape == q.shape and not p.requires_grad
                np.testing.assert_array_equal(p._data, q._data)


def test_tensor_dataset_requiring_grad_batches_carry_the_graph():
    w = ember.arange(6.0).reshape(3, 2).requires_grad_()
    (batch,) = next(iter(ed.DataLoader(ed.TensorDataset(w), batch_size=2)))
    assert batch.requires_grad
    batch.sum().backward()
    np.testing.assert_array_equal(w.grad._data, [[1, 1], [1, 1], [0, 0]])


def test_dataloader_out_of_range_index_raises_index_error():
    loader = ed.DataLoader(ed.TensorDataset(ember.arange(3)), batch_sampler=[[0, 5]])
    with pytest.raises(IndexError):
        next(iter(loader))


def test_shuffle_is_reproducible_from_manual_seed_and_generator():
    ds = ed.TensorDataset(ember.arange(40))

    def epochs(loader):
        return [[b[0].tolist() for b in loader] for _ in range(2)]

    ember.manual_seed(0)
    first = epochs(ed.DataLoader(ds, batch_size=8, shuffle=True))
    ember.manual_seed(0)
    assert epochs(ed.DataLoader(ds, batch_size=8, shuffle=True)) == first
    assert first[0] != first[1]
    assert sorted(sum(first[0], [])) == list(range(40))
    g = lambda: ember.Generator().manual_seed(5)  # noqa: E731
    assert epochs(ed.DataLoader(ds, batch_size=8, shuffle=True, generator=g())) == \
        epochs(ed.DataLoader(ds, batch_size=8, shuffle=True, generator=g()))


class Stream(ed.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


class TorchStream(td.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)])
def test_iterable_dataset_batches_and_len_match_torch(kwargs):
    e, t = ed.DataLoader(Stream(10), **kwargs), td.DataLoader(TorchStream(10), **kwargs)
    assert len(e) == len(t)
    same(list(e), list(t))


def test_iterable_dataset_longer_than_its_len_warns():
    class Liar(Stream):
        def __len__(self):
            return 2
    loader = ed.DataLoader(Liar(4), batch_size=1)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        assert len(list(loader)) == 4


def test_chain_dataset():
    same(list(ed.DataLoader(Stream(3) + Stream(2), batch_size=None)),
         list(td.DataLoader(TorchStream(3) + TorchStream(2), batch_size=None)))


@pytest.mark.parametrize("make", [
    lambda data, ds, it: data.DataLoader(ds, batch_size=2, batch_sampler=[[0]]),
    lambda data, ds, it: data.DataLoader(ds, shuffle=True, batch_sampler=[[0]]),
    lambda data, ds, it: data.DataLoader(ds, drop_last=True, batch_sampler=[[0]]),
    lambda data, ds, it: data.DataLoader(ds, sampler=[0], shuffle=True),
    lambda data, ds, it: data.DataLoader(ds, batch_size=None, drop_last=True),
    lambda data, ds, it: data.DataLoader(it, shuffle=True),
    lambda data, ds, it: data.DataLoader(it, sampler=[0]),
    lambda data, ds, it: data.DataLoader(ds, num_workers=-1),
    lambda data, ds, it: data.DataLoader(ds, timeout=-1),
    lambda data, ds, it: data.DataLoader(ds, prefetch_factor=2),
    lambda data, ds, it: data.DataLoader(ds, persistent_workers=True),
    lambda data, ds, it: data.DataLoader(ds, num_workers=1, multiprocessing_context="no-such-method"),
    lambda data, ds, it: data.DataLoader(ds, multiprocessing_context="fork"),
    lambda data, ds, it: setattr(data.DataLoader(ds), "batch_size", 3),
])
def test_dataloader_option_errors_match_torch(make):
    with pytest.raises(Exception) as t_err:
        make(td, list(range(4)), TorchStream(4))
    with pytest.raises(t_err.type) as e_err:
        make(ed, list(range(4)), Stream(4))
    expected = str(t_err.value).replace("TorchStream", "Stream")
    expected = re.sub(r"object at 0x[0-9a-f]+", "", expected)
    assert re.sub(r"object at 0x[0-9a-f]+", "", str(e_err.value)) == expected


def test_dataloader_custom_batch_sampler_and_collate_fn():
    loader = ed.DataLoader(list(range(10)), batch_sampler=[[3, 1], [9]], collate_fn=lambda b: sum(b))
    assert list(loader) == [4, 9] and len(loader) == 2
    loader = ed.DataLoader(list(range(5)), sampler=[4, 0, 2], batch_size=2)
    assert [b.tolist() for b in loader] == [[4, 0], [2]]


def test_pin_memory_warns_like_torch_without_an_accelerator():
    with pytest.warns(UserWarning, match="no accelerator is found"):
        list(ed.DataLoader([1, 2], pin_memory=True))


def test_exports_match_torch():
    for name in ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
                 "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
                 "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DataLoader",
                 "default_collate", "default_convert", "get_worker_info"]:
        assert hasattr(td, name) and hasattr(ed, name), name
    assert ember.utils.data is ed and ed.get_worker_info() is None
    with pytest.raises(AttributeError):
        ember.utils.no_such_module
