import pytest


@pytest.fixture(autouse=True)
def validation_on():
    """torch's default validation is process state other tests change (torch.compile's tracing
    turns it off); both libraries validate in these tests, as by default."""
    torch = pytest.importorskip("torch")
    saved = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(saved)
