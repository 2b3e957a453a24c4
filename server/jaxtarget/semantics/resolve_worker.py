"""Resolution through jedi in a child process, for the long-lived language server.

jedi keeps every module it parsed in memory, and a first start that meets the names of a
hundred jax files makes it read most of jax: the memory that takes is not given back to
the system when jedi drops the trees. ``WorkerResolver`` asks a child process running a
``JediResolver`` instead, started when the resolved-name store and the answers already held
do not cover a request, and stopped once it has been idle for ``idle_seconds``: the
server's own memory stays what a later start, whose names all come from the store, needs.

The child speaks one JSON object per line on its standard input and output, and finds
jaxtarget and jedi as the server did (the same interpreter, the same ``PYTHONPATH``). It
writes the store itself, so the next start finds what it resolved. A child that dies or
answers something unreadable is started again once per request; if that fails too, the
request's names stay unresolved and are not remembered (the next request asks again). A
request the child could not serve (``"ok": false``) is unresolved and leaves it running.
The child exits when its standard input closes, so it never outlives the server.

    python -m jaxtarget.semantics.resolve_worker
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from .name_store import NameStore, unanswered
from .resolver import Binding, Query, Spot

log = logging.getLogger("jaxtarget")

#: seconds a child waits for its next request before it is stopped
IDLE_SECONDS = 15.0

_Key = tuple[Query, frozenset[str], frozenset[str]]


def _query_to_json(q: Query) -> list[Any]:
    b = q.binding
    return [b.kind, b.module, b.name, b.asname, b.level, q.dotted]


def _query_from_json(item: list[Any]) -> Query:
    kind, module, name, asname, level, dotted = item
    return Query(Binding(str(kind), str(module), name, asname, int(level)), str(dotted))


class WorkerResolver:
    """A ``Resolver`` whose jedi runs in a child process that stops when idle."""

    exact = True
    reason = ""

    def __init__(
        self,
        python: str | None,
        store: NameStore | None,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        """``python``: the interpreter whose jax is analysed (None: the running one)."""
        self.python = python
        self.store = store
        self.idle_seconds = idle_seconds
        self._cache: dict[_Key, str | None] = {}
        self._described: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._timer: threading.Timer | None = None
        self._last_used = 0.0

    # ---------------------------------------------------------------- Resolver

    def resolve(
        self, queries: Sequence[Query], wanted: frozenset[str], lacking: frozenset[str] = frozenset()
    ) -> list[str | None]:
        lacking &= wanted
        with self._lock:
            missing = unanswered(queries, wanted, lacking, self._cache, self.store)
            if missing:
                reply = self._ask(
                    {
                        "op": "resolve",
                        "queries": [_query_to_json(q) for q in missing],
                        "wanted": sorted(wanted),
                        "lacking": sorted(lacking),
                    }
                )
                answers = _answers(reply, len(missing))
                if answers is None:  # no child could answer: unresolved, asked again next time
                    return [self._cache.get((q, wanted, lacking)) for q in queries]
                # kept for the server's life, as a JediResolver in this process would keep them;
                # the child stores on disk only what jedi answered without raising
                for q, answer in zip(missing, answers, strict=True):
                    self._cache[(q, wanted, lacking)] = answer
            return [self._cache[(q, wanted, lacking)] for q in queries]

    def resolve_in_file(
        self,
        source: str,
        path: str | None,
        spots: Sequence[Spot],
        wanted: frozenset[str],
        lacking: frozenset[str] = frozenset(),
    ) -> list[str | None]:
        with self._lock:
            reply = self._ask(
                {
                    "op": "in_file",
                    "source": source,
                    "path": path,
                    "spots": [[s.line, s.col, s.guess] for s in spots],
                    "wanted": sorted(wanted),
                    "lacking": sorted(lacking),
                }
            )
        answers = _answers(reply, len(spots))
        return answers if answers is not None else [None] * len(spots)

    def describe(self, qualname: str) -> tuple[str, str]:
        with self._lock:
            known = self._described.get(qualname)
            if known is not None:
                return known
            reply = self._ask({"op": "describe", "name": qualname})
            if (
                reply is None
                or not reply.get("ok")
                or not isinstance(reply.get("signature"), str)
                or not isinstance(reply.get("doc"), str)
            ):
                return "", ""
            described = (reply["signature"], reply["doc"])
            self._described[qualname] = described
            return described

    # ---------------------------------------------------------------- the child

    @property
    def worker_pid(self) -> int | None:
        """The running child's process id (None: none running)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def close(self) -> None:
        """Stop the child now (it is started again when needed)."""
        with self._lock:
            self._stop()

    def _ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The child's reply to one request (None: no child could answer). Called with the lock held."""
        reply = None
        for _ in range(2):  # a child that died meanwhile (or on this request) is started once more
            process = self._running()
            if process is None:
                break
            reply = _exchange(process, request)
            if reply is not None:
                break
            self._stop()
        self._last_used = time.monotonic()
        if self._process is not None and self._timer is None:
            # one timer per idle period, not one per request: it looks again when it fires
            self._timer = threading.Timer(self.idle_seconds, self._stop_when_idle)
            self._timer.daemon = True
            self._timer.start()
        return reply

    def _running(self) -> subprocess.Popen[str] | None:
        if self._process is not None and self._process.poll() is None:
            return self._process
        config = {
            "python": self.python,
            "store": str(self.store.file) if self.store is not None and self.store.file is not None else None,
            "modules": sorted(self.store.modules) if self.store is not None else [],
        }
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "jaxtarget.semantics.resolve_worker", json.dumps(config)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                errors="surrogateescape",
            )
        except OSError as exc:
            log.warning("cannot start the resolution process: %s", exc)
            self._process = None
        return self._process

    def _stop_when_idle(self) -> None:
        with self._lock:
            self._timer = None
            left = self._last_used + self.idle_seconds - time.monotonic()
            if left > 0 and self._process is not None:
                self._timer = threading.Timer(left, self._stop_when_idle)
                self._timer.daemon = True
                self._timer.start()
            else:
                self._stop()

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        finally:
            if process.stdout is not None:
                process.stdout.close()


def _exchange(process: subprocess.Popen[str], request: dict[str, Any]) -> dict[str, Any] | None:
    """The child's reply (None: it could not be asked, or answered nothing readable)."""
    stdin: IO[str] | None = process.stdin
    stdout: IO[str] | None = process.stdout
    if stdin is None or stdout is None:
        return None
    try:
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        line = stdout.readline()
    except (OSError, ValueError):
        return None
    try:
        reply = json.loads(line)
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None


def _answers(reply: dict[str, Any] | None, count: int) -> list[str | None] | None:
    if reply is None or not reply.get("ok"):
        return None
    answers = reply.get("answers")
    if not isinstance(answers, list) or len(answers) != count:
        return None
    return [a if isinstance(a, str) else None for a in answers]


# -------------------------------------------------------------------- the child's side


def _serve(config: dict[str, Any]) -> None:
    from .jedi_resolver import JediResolver, create_environment

    python = config.get("python")
    environment = create_environment(python) if python else None
    file = config.get("store")
    store = NameStore(Path(file), frozenset(config.get("modules") or ())) if file else None
    resolver = JediResolver(environment, store)
    for line in sys.stdin:
        try:
            request = json.loads(line)
            reply = _handle(resolver, request)
        except Exception as exc:  # one bad request: say so and serve the next
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _handle(resolver: Any, request: dict[str, Any]) -> dict[str, Any]:
    op = request["op"]
    if op == "describe":
        signature, doc = resolver.describe(request["name"])
        return {"ok": True, "signature": signature, "doc": doc}
    wanted = frozenset(request["wanted"])
    lacking = frozenset(request["lacking"])
    if op == "resolve":
        queries = [_query_from_json(item) for item in request["queries"]]
        answers = resolver.resolve(queries, wanted, lacking)
        return {"ok": True, "answers": answers}
    if op == "in_file":
        spots = [Spot(int(line), int(col), guess) for line, col, guess in request["spots"]]
        answers = resolver.resolve_in_file(request["source"], request["path"], spots, wanted, lacking)
        return {"ok": True, "answers": answers}
    raise ValueError(f"unknown request {op!r}")


def main() -> None:
    _serve(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
