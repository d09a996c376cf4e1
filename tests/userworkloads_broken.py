"""A user workload module whose import fails (a missing dependency): `chaos run` must say so once."""

import chaos_no_such_dependency  # noqa: F401


def factory(ctx):
    raise AssertionError("never reached")
