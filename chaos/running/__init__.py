"""Running a scenario: from cells to journaled trial records, and everything that keeps a run safe.

* ``orchestrator``: a run end to end (cells, kinds, journal, analysis, reports).
* ``trial``: one trial's racers, barriers, kills and records (``RunContext``, ``TrialRun``).
* ``journal`` / ``stored``: the append-only journal and reading it back one cell at a time.
* ``runfolder``: the one owner of a run folder (create, metadata, ``latest``, load, mark).
* ``registry`` / ``cleanup``: live-run registry, and reaping what dead runs left.
* ``resume``: ``--resume`` and ``rerun`` of stored runs.
* ``nightly``: suites of runs, trends, regressions.
* ``workdir``, ``pgstore``, ``selftest``: work folders, Postgres schemas per run, the injector's self-test.
"""
