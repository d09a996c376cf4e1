"""Shared pytest configuration."""

from conftest_infra import *  # noqa: F401,F403  (Postgres, Docker and SSH-lab fixtures)
