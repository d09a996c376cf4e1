"""A user workload module whose import fails (a missing dependency): `chaos run` must say so once.

It stays apart from ``user_workloads``: its import fails on purpose, and would take every factory
beside it down with it.
"""

import chaos_no_such_dependency  # noqa: F401


def factory(ctx):
    raise AssertionError("never reached")
