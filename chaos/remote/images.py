"""An offline racer image: ``chaos-racer:<hash>`` built by ``docker import`` of a minimal rootfs.

Engines without a registry (CI sandboxes, air-gapped labs) cannot pull ``python:3.11-slim``. This
module assembles a rootfs from *this* machine instead: the running interpreter's prefix (stdlib,
no tests/tk), the installed distributions the racer needs (the framework, its savers, psycopg)
and the shared libraries ``ldd`` says they load, with the same absolute paths as on the host.
The tag is a hash of that file list (paths, sizes, mtimes), so an unchanged environment reuses the
cached image and any upgrade rebuilds it. The chaos package itself is not baked in: the docker
launcher bind-mounts the running source read-only, so racer code always matches the orchestrator.

Users with a registry can build ``compose/Dockerfile`` instead (``--image`` / ``CHAOS_IMAGE``).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from importlib import metadata
from pathlib import Path

RECIPE = "chaos-racer-rootfs/4"
REPO = "chaos-racer"
_STDLIB_SKIP = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages", "config-3.11-x86_64-linux-gnu"}
_LDD_LINE = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x")


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def racer_dists(by_name: dict[str, metadata.Distribution] | None = None) -> tuple[str, ...]:
    """What a racer in the image imports besides the standard library: the distributions and drivers
    (``chaos.targets.racer_distributions``) of every framework whose distributions are all installed
    here (the image runs this interpreter's packages; a framework in an environment of its own is not
    in it)."""
    from chaos.targets import TARGETS, racer_distributions

    by_name = _installed() if by_name is None else by_name
    here = [name for name, info in TARGETS.items() if all(_canon(d) in by_name for d in info.distributions)]
    return racer_distributions(here)


def _installed() -> dict[str, metadata.Distribution]:
    return {_canon(d.metadata["Name"]): d for d in metadata.distributions()}


def dist_closure(roots: tuple[str, ...] | None = None) -> list[metadata.Distribution]:
    """The installed distributions ``roots`` (default: ``racer_dists()``) need (requirements without
    extras, transitively)."""
    from packaging.requirements import Requirement

    by_name = _installed()
    roots = racer_dists(by_name) if roots is None else roots
    seen: dict[str, metadata.Distribution] = {}
    todo = [_canon(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen or name not in by_name:
            continue
        d = seen[name] = by_name[name]
        for req in d.requires or []:
            r = Requirement(req)
            if r.marker is not None and not r.marker.evaluate({"extra": ""}):
                continue
            todo.append(_canon(r.name))
    missing = [r for r in roots if _canon(r) not in seen]
    if missing:
        raise RuntimeError(f"image: distributions {', '.join(missing)} are not installed here: pip install -e '.[test]'")
    return sorted(seen.values(), key=lambda d: _canon(d.metadata["Name"]))


def runtime_files() -> list[str]:
    """Absolute paths of the interpreter, its stdlib and the racer's distributions."""
    files: list[str] = []
    exe = os.path.realpath(sys.executable)
    files.append(exe)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for root, dirs, names in os.walk(stdlib):
        if Path(root) == stdlib:
            dirs[:] = [d for d in dirs if d not in _STDLIB_SKIP]
        files.extend(os.path.join(root, n) for n in names)
    libdir = sysconfig.get_config_var("LIBDIR")
    ldlib = sysconfig.get_config_var("LDLIBRARY")
    if libdir and ldlib and os.path.exists(os.path.join(libdir, ldlib)):
        for n in os.listdir(libdir):
            if n.startswith(ldlib.split(".so")[0]) and ".so" in n:
                files.append(os.path.join(libdir, n))
    for d in dist_closure():
        for f in d.files or []:
            p = os.path.realpath(str(d.locate_file(f)))
            if os.path.isfile(p):
                files.append(p)
    return sorted(set(files))


def shared_libs(files: list[str]) -> list[str]:
    """Libraries (outside ``files``) that the ELF objects among ``files`` load, per ``ldd``."""
    elf = [f for f in files if f.endswith(".so") or ".so." in f or f == os.path.realpath(sys.executable)]
    need: set[str] = set()
    inside = set(files)
    for i in range(0, len(elf), 200):
        out = subprocess.run(["ldd", *elf[i : i + 200]], capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = _LDD_LINE.search(line)
            if m and m.group(1) not in inside and os.path.realpath(m.group(1)) not in inside:
                need.add(m.group(1))
    return sorted(need)


_MANIFEST: tuple[list[str], list[str], str] | None = None


def _manifest() -> tuple[list[str], list[str], str]:
    global _MANIFEST
    if _MANIFEST is None:
        _MANIFEST = _compute_manifest()
    return _MANIFEST


def _compute_manifest() -> tuple[list[str], list[str], str]:
    files = runtime_files()
    libs = shared_libs(files)
    h = hashlib.sha256(RECIPE.encode())
    for p in files + libs:
        st = os.stat(p)
        h.update(f"{p}\0{st.st_size}\0{int(st.st_mtime)}\n".encode())
    return files, libs, h.hexdigest()[:12]


def image_tag() -> str:
    return f"{REPO}:{_manifest()[2]}"


def _add(tar: tarfile.TarFile, path: str, done: set[str]) -> None:
    """Add ``path`` with every symlink on the way (e.g. /lib -> usr/lib) so it resolves the same."""
    parts = Path(path).parts
    cur = "/"
    for i, part in enumerate(parts[1:], start=1):
        cur = os.path.join(cur, part)
        if cur in done:
            if os.path.islink(cur):
                _add(tar, os.path.join(os.path.realpath(cur), *parts[i + 1 :]), done)
                return
            continue
        done.add(cur)
        if os.path.islink(cur):
            ti = tar.gettarinfo(cur, arcname=cur.lstrip("/"))
            tar.addfile(ti)
            _add(tar, os.path.join(os.path.realpath(cur), *parts[i + 1 :]), done)
            return
        ti = tar.gettarinfo(cur, arcname=cur.lstrip("/"))
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        if ti.isdir():
            ti.mode |= 0o755  # e.g. /root is 0700 on the host: racers may run as another uid
            tar.addfile(ti)
        else:
            ti.mode |= 0o444
            with open(cur, "rb") as f:
                tar.addfile(ti, f)


def build_rootfs(dest: str) -> str:
    """Write the rootfs tarball to ``dest``; returns the image hash."""
    files, libs, digest = _manifest()
    done: set[str] = set()
    with tarfile.open(dest, "w") as tar:
        for d in ("tmp", "etc", "proc", "dev", "sys", "work"):
            ti = tarfile.TarInfo(d)
            ti.type, ti.mode = tarfile.DIRTYPE, 0o1777 if d == "tmp" else 0o755
            tar.addfile(ti)
            done.add("/" + d)
        for name, text in (
            ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n"),
            ("etc/group", "root:x:0:\nnogroup:x:65534:\n"),
        ):
            data = text.encode()
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode = len(data), 0o644
            tar.addfile(ti, io.BytesIO(data))
        for p in libs + files:
            _add(tar, p, done)
        bindir = os.path.dirname(os.path.realpath(sys.executable))
        for alias in ("python", "python3"):
            ti = tarfile.TarInfo(os.path.join(bindir, alias).lstrip("/"))
            ti.type, ti.linkname = tarfile.SYMTYPE, os.path.basename(os.path.realpath(sys.executable))
            tar.addfile(ti)
        # the program interpreter the ELF header names (ldd lists it too, but be explicit)
        for ld in ("/lib64/ld-linux-x86-64.so.2",):
            if os.path.exists(ld):
                _add(tar, ld, done)
    return digest


def ensure_image(client=None, *, force: bool = False) -> str:
    """The offline racer image's tag, building it if this environment has not built it yet."""
    import docker

    client = client or docker.from_env()
    files, libs, digest = _manifest()
    tag = f"{REPO}:{digest}"
    previous = None
    try:
        previous = client.images.get(tag).id
        if not force:
            return tag
    except docker.errors.ImageNotFound:
        pass
    py = os.path.realpath(sys.executable)
    with tempfile.TemporaryDirectory(prefix="chaos-rootfs-") as tmp:
        tarball = os.path.join(tmp, "rootfs.tar")
        build_rootfs(tarball)
        changes = [
            f"ENV PATH={os.path.dirname(py)}:/usr/bin:/bin",
            "ENV PYTHONDONTWRITEBYTECODE=1",
            "ENV PYTHONUNBUFFERED=1",
            "WORKDIR /work",
            f'CMD ["{py}", "-c", "import sys; print(sys.version)"]',
            f"LABEL chaos.recipe={RECIPE} chaos.python={py}",
        ]
        client.api.import_image_from_file(tarball, repository=REPO, tag=digest, changes=changes)
    client.images.get(tag)  # raises if the import did not produce it
    if previous and previous != client.images.get(tag).id:
        try:
            client.images.remove(previous)  # the forced rebuild's predecessor, now untagged
        except Exception:
            pass
    for img in client.images.list(name=REPO):  # older offline builds of this recipe family: stale
        if tag not in img.tags and (img.labels or {}).get("chaos.recipe", "").startswith("chaos-racer-rootfs/"):
            try:
                client.images.remove(img.id)
            except Exception:
                pass  # still used by a container: left for the next build
    return tag


def venv_site_packages() -> list[str]:
    """The site-packages of the running virtual environment, if it is one (else nothing).

    The image runs the venv's *base* interpreter (the venv's python is a link to it), which does
    not know the venv: racers in containers need these folders on PYTHONPATH to find the packages
    the image copied from them."""
    import site

    if sys.prefix == sys.base_prefix:
        return []
    return [os.path.realpath(p) for p in site.getsitepackages() if os.path.isdir(p)]


def image_python(client, tag: str) -> str:
    """The interpreter path inside an image (the label of an offline image, else ``python``)."""
    labels = (client.images.get(tag).attrs.get("Config") or {}).get("Labels") or {}
    return labels.get("chaos.python") or "python"


if __name__ == "__main__":
    import time

    t = time.monotonic()
    print(ensure_image(force="--force" in sys.argv), f"{time.monotonic() - t:.1f}s")
