"""Remote hosts: SSH sessions, the host inventory, host checks and offline Docker images."""
