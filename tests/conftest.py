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
