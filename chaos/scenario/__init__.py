"""The scenario model: what a user writes (scenario and suite files) and what it expands into.

* ``model``: ``Scenario``, its matrix and ``Cell``s, strict YAML loading with file:line errors.
* ``suite``: nightly suite files (a list of scenario files with overrides).
* ``seeds``: root, cell, trial and racer seeds derived from one root seed and stable ids.
"""
