"""Reading a file a user or a run folder hands chaos: bounded, regular files only, strict YAML.

Why: every file chaos reads is input it did not write this time (a scenario, a suite, a baseline, a
file of a downloaded run folder). Reading one whole before judging it let a 50 MB file cost 16 s and
185 MB before it was refused, ``/dev/zero`` read until the machine ran out of memory and a FIFO hang
forever; YAML's "last key wins" let a baseline entry ``property: FI`` followed by ``property: EO``
accept EO; and a bad date, a deep nesting or a 5000-digit number escaped as "internal error".

What it promises:

* ``read_text(path, what, max_bytes, error=...)`` opens without blocking (a FIFO never hangs),
  refuses anything but a regular file (``/dev/zero``, a FIFO, a folder) and a file over
  ``max_bytes`` before reading it, reads at most ``max_bytes + 1`` bytes (a file that grows while
  read is still capped) and decodes UTF-8; every refusal is one ``error`` naming the file.
* ``nofollow=True`` (a file of a run or night folder, which may come from anywhere) also refuses a
  symbolic link, whatever it points to (``O_NOFOLLOW``): a link to ``/dev/zero``, a FIFO or a user's
  file is never followed.
* ``printable(text)``: text read from such a file, safe to print on a terminal (control characters,
  escape sequences and line breaks written as ``\x1b``-style escapes).
* ``strict_yaml(text, path, what, error=...)`` parses YAML safely and refuses duplicate keys
  (naming the line of both), documents that expand past ``MAX_NODES`` nodes (alias bombs), nesting
  deeper than ``MAX_DEPTH`` (counted by chaos on YAML's tokens before anything is built, so the
  message is chaos's whatever PyYAML's release: 6.0 ran out of stack, 6.0.4 has a limit of its own), and scalars YAML cannot build (a 31 February, a 5000-digit integer); one line each.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from chaos.racer.errors import ChaosError

__all__ = ["MAX_NODES", "check_duplicates", "expanded_size", "printable", "read_bytes", "read_text", "strict_yaml"]

MAX_NODES = 100_000
MAX_DEPTH = 100  # nesting levels: chaos's own limit, below every YAML library's (PyYAML 6.0.4's is 1000)


def read_bytes(
    path: str | os.PathLike,
    what: str,
    max_bytes: int,
    *,
    error: type[ChaosError] = ChaosError,
    hint: str | None = None,
    nofollow: bool = False,
) -> bytes:
    """The bytes of the regular file ``path`` (at most ``max_bytes``), or ``error`` naming it."""
    p = Path(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (os.O_NOFOLLOW if nofollow else 0)
    try:
        fd = os.open(p, flags)
    except FileNotFoundError:
        raise error(f"{p}: no such {what} file", hint=hint) from None
    except OSError as exc:
        if nofollow and exc.errno == errno.ELOOP:
            raise error(
                f"{p}: a symbolic link; a {what} file of a run folder is a regular file, never followed", hint="remove the link"
            ) from None
        raise error(f"{p}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"{p}: cannot read the {what}: it is a folder, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{p}: not a regular file (a device, FIFO or socket); a {what} is a file", hint="copy it to a file first")
        if st.st_size > max_bytes:
            raise error(f"{p}: {st.st_size} bytes; a {what} file is at most {max_bytes} bytes", hint="write long text elsewhere")
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise error(f"{p}: cannot read the {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise error(f"{p}: over {max_bytes} bytes; a {what} file is at most {max_bytes} bytes", hint="write long text elsewhere")
    return data


def read_text(
    path: str | os.PathLike,
    what: str,
    max_bytes: int,
    *,
    error: type[ChaosError] = ChaosError,
    hint: str | None = None,
    nofollow: bool = False,
) -> str:
    """The UTF-8 text of the regular file ``path`` (at most ``max_bytes``), or ``error`` naming it."""
    data = read_bytes(path, what, max_bytes, error=error, hint=hint, nofollow=nofollow)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{Path(path)}: cannot read the {what}: not UTF-8 text (byte {exc.start})") from None


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on (ESC, BEL, CR, line breaks, bidi
    controls) written as an escape (``\\x1b``), so a file's text printed cannot paint the screen."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def expanded_size(node: Any) -> int:
    """The number of nodes ``node`` stands for once aliases are expanded (linear time: memoised)."""
    import yaml

    memo: dict[int, int] = {}

    def size(n: yaml.Node, depth: int = 0) -> int:
        if depth > 200:
            raise RecursionError
        if id(n) in memo:
            return memo[id(n)]
        memo[id(n)] = 1  # a cycle counts once
        if isinstance(n, yaml.MappingNode):
            total = 1 + sum(size(k, depth + 1) + size(v, depth + 1) for k, v in n.value)
        elif isinstance(n, yaml.SequenceNode):
            total = 1 + sum(size(v, depth + 1) for v in n.value)
        else:
            total = 1
        memo[id(n)] = min(total, MAX_NODES + 1)
        return memo[id(n)]

    return size(node)


def check_duplicates(node: Any, path: str, error: type[ChaosError] = ChaosError) -> None:
    """Refuse a mapping that repeats a key anywhere in ``node`` (YAML would keep the last silently)."""
    import yaml

    stack = [node]
    done: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in done:
            continue  # an alias (or a cycle) is checked once
        done.add(id(n))
        if isinstance(n, yaml.MappingNode):
            seen: dict[str, int] = {}
            for k, v in n.value:
                key = str(k.value)
                if key in seen:
                    raise error(f"{path}:{k.start_mark.line + 1}: duplicate key {key!r} (first at line {seen[key]})")
                seen[key] = k.start_mark.line + 1
                stack.append(v)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)


def _base() -> Any:
    """libyaml's safe loader when PyYAML has it (several times faster on a big file), else PyYAML's."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _loader() -> Any:
    """A SafeLoader that leaves dates and integers it cannot build as text, so the validator of the
    field says what is wrong with it (``expires: 2027-02-30`` names ``expires``)."""
    import yaml

    class Loader(_base()):  # type: ignore[misc]  # the base is chosen at run time (CSafeLoader or SafeLoader)
        pass

    def timestamp(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        try:
            return yaml.SafeLoader.construct_yaml_timestamp(loader, node)  # type: ignore[arg-type]  # stubs want a ScalarNode; YAML calls this only with one
        except ValueError:
            return loader.construct_scalar(node)  # type: ignore[arg-type]  # likewise: a scalar node

    def integer(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        try:
            return yaml.SafeLoader.construct_yaml_int(loader, node)  # type: ignore[arg-type]  # stubs want a ScalarNode; YAML calls this only with one
        except ValueError:
            return loader.construct_scalar(node)  # type: ignore[arg-type]  # likewise: a scalar node

    Loader.add_constructor("tag:yaml.org,2002:timestamp", timestamp)
    Loader.add_constructor("tag:yaml.org,2002:int", integer)
    return Loader


def check_depth(text: str, path: str, what: str, error: type[ChaosError] = ChaosError) -> None:
    """Refuse ``text`` when its collections nest deeper than ``MAX_DEPTH`` (YAML's tokens, counted
    without recursion; a text YAML cannot scan for another reason is left to the parser, which says where)."""
    import yaml

    opening = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken, yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken)
    closing = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
    # libyaml's scanner (fast) reads ahead and may refuse a deep text itself before yielding a token;
    # then PyYAML's own scanner, which yields each token as it goes, counts (a rare, slow path)
    for loader in (_base(), yaml.SafeLoader):
        depth = 0
        try:
            for token in yaml.scan(text, Loader=loader):
                if isinstance(token, opening):
                    depth += 1
                    if depth > MAX_DEPTH:
                        raise error(f"{path}:{token.start_mark.line + 1}: nested too deeply to be a {what} (over {MAX_DEPTH} levels)")
                elif isinstance(token, closing):
                    depth -= 1
            return
        except yaml.YAMLError:
            continue


def strict_yaml(text: str, path: str, what: str, *, error: type[ChaosError] = ChaosError) -> Any:
    """``text`` parsed as safe YAML, refusing what a strict reader must (see the module docstring)."""
    import yaml

    check_depth(text, path, what, error)
    try:
        node = yaml.compose(text, Loader=_base())
        if node is None:
            return None
        if expanded_size(node) > MAX_NODES:
            raise error(f"{path}: the {what} expands to more than {MAX_NODES} YAML nodes (aliases?); write values out")
        check_duplicates(node, path, error)
        return yaml.load(text, Loader=_loader())  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise error(f"{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to be a {what}") from None
    except (ValueError, OverflowError) as exc:  # a scalar YAML cannot build: 2027-02-30, a 5000-digit int
        raise error(f"{path}: a value YAML cannot read: {str(exc)[:200]}") from None
