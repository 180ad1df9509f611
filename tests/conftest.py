"""Shared pytest configuration: the Hypothesis profiles.

``default`` (used unless told otherwise) runs a few hundred examples per
operator with a fixed derivation of the random choices, so CI is
reproducible; ``long`` (``pytest --hypothesis-profile=long``) runs many
thousands with fresh randomness.
"""
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is a test dependency; without it those tests skip
    settings = None

if settings is not None:
    _common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                   print_blob=True)
    settings.register_profile("default", max_examples=200, derandomize=True, database=None, **_common)
    settings.register_profile("long", max_examples=5000, **_common)
    settings.load_profile("default")


import pytest  # noqa: E402


@pytest.fixture
def results_of(monkeypatch):
    """``results_of(owner, name)`` wraps ``owner.name`` for the test and
    returns the list it fills: for every call, whether it returned
    something (a route that returns None declined the call)."""
    def spy(owner, name):
        record, real = [], getattr(owner, name)

        def wrapped(*args, **kwargs):
            out = real(*args, **kwargs)
            record.append(out is not None)
            return out
        monkeypatch.setattr(owner, name, wrapped)
        return record
    return spy


def pytest_sessionstart(session):
    """Stop at once, naming the pair, when the installed optional
    dependencies do not import together (tests/installed_extras.py): the
    suite would otherwise fail deep inside a test for a packaging reason."""
    from installed_extras import broken_imports
    problems = broken_imports()
    if problems:
        pytest.exit("the optional dependencies installed do not import together:\n" + "\n".join(problems),
                    returncode=3)
