"""``chaos hosts ...``: check an SSH inventory before a run spends time on it.

``chaos hosts check hosts/lab.yaml`` connects to every host (host key verified against the
inventory's known_hosts) and prints, per host: reachable, authenticated, host key fingerprint,
Python and framework versions, clock offset. Exit 0 when every host is usable, 3 otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from chaos.racer.errors import ChaosError

hosts_app = typer.Typer(no_args_is_help=True, help="SSH host inventories: check them before a run.")


@hosts_app.command("check")
def check(
    inventory: Path = typer.Argument(..., help="inventory YAML (see hosts/lab.yaml)"),
    host: list[str] | None = typer.Option(None, "--host", help="check only these hosts (repeatable)"),
    trust_on_first_use: bool = typer.Option(
        False, "--trust-on-first-use", help="accept and record unknown host keys, printing their fingerprints"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the results as JSON"),
) -> None:
    from chaos.remote.hostcheck import check_hosts

    console = Console()
    try:
        results = check_hosts(
            inventory, host or None, trust_on_first_use=trust_on_first_use or None, say=lambda m: console.print(m, markup=False)
        )
    except ChaosError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None
    if as_json:
        typer.echo(json.dumps(results, indent=2))
    else:
        t = Table(title=f"hosts in {inventory}")
        for col in ("host", "address", "ok", "host key", "python", "hostname", "frameworks", "clock offset ms", "error"):
            t.add_column(col, overflow="fold")
        for r in results:
            fw = ", ".join(f"{k} {v}" for k, v in (r.get("versions") or {}).items() if v)
            off = f"{r['clock_offset_ms']:+.1f} (rtt {r['rtt_ms']:.1f})" if "clock_offset_ms" in r else ""
            t.add_row(
                r["host"],
                r["address"],
                "yes" if r["ok"] else "NO",
                r.get("host_key", ""),
                r.get("python", ""),
                r.get("hostname", ""),
                fw,
                off,
                r.get("error", ""),
            )
        console.print(t)
    raise typer.Exit(0 if all(r["ok"] for r in results) else 3)
