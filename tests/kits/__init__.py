"""Test kits: the helpers tests share, so each test reads as the story of what a user sees.

- ``runs``: write a scenario and run it for real; find racers left standing.
- ``runkit``: hand-built trial records shaped like real ones, for the pure report tests.
- ``racekit``: real race trials through any launcher and backend, without run folders.
- ``warmkit``: racer specs and small scenario runs for the warm-racer tests.
- ``support``: a RunContext over cold local racers, to run single trials by hand.
- ``robustkit``: the real CLI run as a user would, with its own run registry.
- ``framework_support``: find cells, verdicts and kill points in a framework test's results.
- ``browserkit``: a real headless browser for the report tests.
- ``shardkit``: the tiny suite the shard tests split, and a night's verdicts and seeds read back.
- ``infra``: fixtures for Postgres, Docker and the SSH lab; ``lab``: the SSH lab itself
  (``python -m tests.kits.lab up``).
"""
