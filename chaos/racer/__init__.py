"""The racer side: what runs inside a racer process, in the framework's environment.

This package, ``chaos.targets`` and ``chaos.workloads`` (plus the empty-of-imports
``chaos/__init__.py``) are the code that ships to a container or an SSH host. They import only the
standard library, the framework under test and its database driver, and each other; the
orchestrator side imports them, never the reverse (``tests/test_racer_side.py`` imports them with
every third-party package blocked).

* ``main``: ``python -m chaos.racer SPEC.json``: one racer, its actions, its outcome file.
* ``protocol``: the typed records of the racer protocol (spec, action, outcome, inspect result).
* ``barrier``: filesystem barriers (arrive, stop, hold) and the orchestrator's view of them.
* ``ledger`` / ``ledger_pg``: the effect ledger (SQLite, or Postgres across hosts).
* ``forkserver``: warm racers, forked from one process that imported the framework once.
* ``wrapper``: a parent that waits for a racer and records its exit status (containers, SSH).
* ``remote_agent``: the per-host control agent over SSH (stops, kills, /proc states).
* ``procfs``: /proc readers (thread states, parent-death signals).
* ``errors``, ``redact``: the error taxonomy and secret masking both sides share.
* ``lazy``: the public names ``chaos`` and ``chaos.workloads`` import on first use.
"""
