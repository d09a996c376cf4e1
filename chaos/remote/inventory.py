"""Host inventories (``hosts/*.yaml``): where SSH racers run, validated strictly.

An inventory names the hosts (name, address, port, user, key, python, workdir), the known_hosts
file their host keys are checked against, and whether an unknown host key may be trusted on first
use. Unknown keys, wrong types, duplicate names and bad ports are errors naming the file and the
field. Relative paths (key, known_hosts) are relative to the inventory file.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chaos.racer.errors import ChaosError

_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")


class InventoryError(ChaosError):
    """An inventory file that cannot be used: names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Host(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
    address: str
    port: int = Field(22, ge=1, le=65535)
    user: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
    key: str = Field(min_length=1, description="private key file (relative to the inventory file)")
    python: str = Field("python3", min_length=1, description="interpreter on the host with the framework installed")
    workdir: str = Field(description="absolute folder on the host for shipped code, specs and results")

    @field_validator("address")
    @classmethod
    def _address(cls, v: str) -> str:
        try:
            ipaddress.ip_address(v)
            return v
        except ValueError:
            if _HOSTNAME.match(v):
                return v
        raise ValueError("address must be an IP address or a DNS name")

    @field_validator("workdir")
    @classmethod
    def _workdir(cls, v: str) -> str:
        if not v.startswith("/") or "\x00" in v or v.rstrip("/") == "":
            raise ValueError("workdir must be an absolute path other than /")
        return v.rstrip("/")


class Inventory(_Strict):
    known_hosts: str = Field("~/.ssh/known_hosts", description="host keys are verified against this file")
    trust_on_first_use: bool = Field(False, description="accept and record an unknown host key (printing its fingerprint)")
    connect_timeout_s: float = Field(5, gt=0, le=120)
    retries: int = Field(2, ge=0, le=10, description="extra attempts for a host that does not answer")
    hosts: list[Host] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Inventory:
        names = [h.name for h in self.hosts]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"host names must be unique; repeated: {', '.join(dup)}")
        return self

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.name == name:
                return h
        raise InventoryError(f"host {name!r} is not in the inventory; known: {', '.join(h.name for h in self.hosts)}")


def load_inventory(path: str | os.PathLike) -> Inventory:
    """Load and validate ``path``; key and known_hosts paths come back absolute."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except FileNotFoundError:
        raise InventoryError(f"{p}: no such inventory file (see hosts/lab.yaml for the format)") from None
    except yaml.YAMLError as exc:
        raise InventoryError(f"{p}: not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise InventoryError(f"{p}: an inventory is a mapping with a 'hosts' list")
    try:
        inv = Inventory.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = ".".join(str(x) for x in e["loc"]) or "(top)"
        raise InventoryError(f"{p}: {loc}: {e['msg']}") from None
    base = p.resolve().parent

    def resolve(x: str) -> str:
        x = os.path.expanduser(x)
        return x if os.path.isabs(x) else str((base / x).resolve())

    return inv.model_copy(
        update={
            "known_hosts": resolve(inv.known_hosts),
            "hosts": [h.model_copy(update={"key": resolve(h.key)}) for h in inv.hosts],
        }
    )
