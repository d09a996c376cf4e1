"""Running a scenario: from cells to journaled trial records, and everything that keeps a run safe.

* ``orchestrator``: the entry: a scenario in, a run folder created, ``execute`` (lock, registry, storage, journal).
* ``execution``: the cell loop, the journal append of each trial, the ordered clean-up, the conclusion.
* ``signals`` / ``options``: Ctrl-C and SIGTERM; ``RunOptions`` and ``RunOutcome``.
* ``preflight``: what the racers' Python must import, and a user workload run once, before any folder.
* ``analysis``: a journal scored into results, and results.json and the reports written.
* ``trial``: one trial's racers, barriers, kills and records (``RunContext``, ``TrialRun``).
* ``journal`` / ``stored``: the append-only journal and reading it back one cell at a time.
* ``runfolder``: the one owner of a run folder (create, metadata, ``latest``, load, mark).
* ``registry`` / ``cleanup``: live-run registry, and reaping what dead runs left.
* ``resume``: ``--resume`` and ``rerun`` of stored runs.
* ``nightly`` / ``nights``: suites of runs, trends, regressions; which folders are nights.
* ``workdir``, ``pgstore``, ``selftest``: work folders, Postgres schemas per run, the injector's self-test.
"""
