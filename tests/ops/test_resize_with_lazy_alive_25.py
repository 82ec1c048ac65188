"""``resize_`` past a storage's end moves every tensor on it, found by scanning the heap; an
uninitialized parameter of a lazy module alive anywhere in the process refused the scan's read
of its ``_data`` (ValueError), so ``resize_`` failed wherever a LazyLinear was left around (the
suite's order met it in session 25's CI run)."""
import ember


def test_resize_grows_while_a_lazy_modules_parameter_is_alive():
    lazy = ember.nn.LazyLinear(3)
    x = ember.arange(6.0)
    view = x[1:3]
    x.resize_(2, 2)[0, 0] = 9
    assert x.resize_(8).shape == (8,) and x[:4].tolist() == [9.0, 1.0, 2.0, 3.0]
    assert view.tolist() == [1.0, 2.0] and x.untyped_storage().data_ptr() == view.untyped_storage().data_ptr()
    assert lazy.has_uninitialized_params()
