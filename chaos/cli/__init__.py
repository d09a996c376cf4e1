"""The ``chaos`` command line (``app``: run, rerun, validate, nightly, ...; ``hosts``: ``chaos hosts``)."""
