"""Warm racers: one fork server per run (locally), per container (Docker) or per host (SSH).

* ``client``: the fork-server protocol client, the warm launcher, and the local pipe transport.
* ``docker``: the transport over a container's attach stream.
* ``ssh``: the transport over an SSH exec channel.
"""
