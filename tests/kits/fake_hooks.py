"""The orchestrator half of a made-up framework (``tests/test_target_hooks.py``): one option of its
own, and a service per cell that only records what the engine did with it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from chaos.kinds.base import TargetOptions
from chaos.targets.hooks import HostContext

EVENTS: list[str] = []


class Options(TargetOptions):
    colour: Literal["red", "blue"] = Field("red", description="made up: the colour fakeflow paints its checkpoints")


class Service:
    def __init__(self, context: HostContext):
        self.context = context

    @property
    def url(self) -> str:
        return "http://127.0.0.1:1"

    def start(self) -> Service:
        EVENTS.append("start")
        return self

    def kill(self) -> None:
        EVENTS.append("kill")

    def restart(self) -> Service:
        EVENTS.append("restart")
        return self

    def stop(self) -> None:
        EVENTS.append("stop")


def host(cell: object, context: HostContext) -> Service:
    EVENTS.append(f"host {context.python}")
    return Service(context)
