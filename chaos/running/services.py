"""The services a run's cells are clients of, started once and shared by the cells that would start the same one.

Why: a framework that hosts a service per cell (``chaos.targets.hooks.HostsCells``: the LangGraph
Agent Server) took seconds to start it for every cell, though most cells of a run ask for the same
server (the same program, graphs and environment) and each trial works on threads of its own. A
service that says when another would be the same (``SharedService.share_key``) and when it may
serve a next cell (``SharedService.idle``: nothing of the last cell in flight) is kept between cells.

What it promises:

* ``ServicePool.serve(service)`` is the running service a cell uses: an idle one of the run with
  the same key, else ``service`` itself, started. A service that is no ``SharedService`` is always
  its own, started for its cell.
* ``ServicePool.done(service)`` is the end of its cell: a shared service that is idle stays for the
  next cell; one that is not (work of the cell still in flight, or it died) is stopped, and so is
  every service that is no ``SharedService``.
* ``ServicePool.close()`` stops every service it kept, at the end of the run: none outlives the run,
  and no run ever uses another run's (a pool is the run's).
"""

from __future__ import annotations

from chaos.targets import CellService, SharedService


class ServicePool:
    """The run's services kept between cells, by share key."""

    def __init__(self) -> None:
        self._idle: dict[str, CellService] = {}
        self.started = 0  # services this pool started (a shared one counts once)

    def serve(self, service: CellService) -> CellService:
        """The running service for a cell that asked for ``service``: a kept one with its key, or it, started."""
        if isinstance(service, SharedService):
            kept = self._idle.pop(service.share_key(), None)
            if kept is not None:
                if isinstance(kept, SharedService) and kept.idle():
                    return kept
                kept.stop()  # it died, or still works for an earlier cell: a fresh one instead
        service.start()
        self.started += 1
        return service

    def done(self, service: CellService) -> None:
        """Its cell ended: kept for the next cell with its key if it is shared and idle, else stopped."""
        if isinstance(service, SharedService) and service.idle():
            key = service.share_key()
            earlier = self._idle.pop(key, None)
            if earlier is not None and earlier is not service:
                earlier.stop()
            self._idle[key] = service
            return
        service.stop()

    def close(self) -> None:
        """Stop every service kept (the run ends)."""
        kept, self._idle = list(self._idle.values()), {}
        for service in kept:
            service.stop()
