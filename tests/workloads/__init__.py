"""User-workload modules, written as a team would write its own (``package.module:factory``).

A regular package, not a namespace one: chaos's scenario check locates a factory's module without
importing it, and (today) fails on a namespace package nested in another (``tests.workloads``
under ``tests``).
"""
