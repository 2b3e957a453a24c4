"""The probe's child program: runs in the user's interpreter, stdlib and jax only.

It is started as ``python -E -c <this source>`` in an empty temporary folder,
reads one JSON request from stdin and prints exactly one JSON object on
stdout. It never imports jaxtarget and never executes workspace code. Every
lowering case comes from the request (the rule catalog's probe programs).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import traceback
from typing import Any


def _plugins() -> list[dict[str, str]]:
    from importlib import metadata

    found = []
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith(("jax-cuda", "jax-rocm", "jax-tpu", "libtpu", "jax-plugins")) or (
            name.startswith("jax-") and "plugin" in name
        ):
            found.append({"name": name, "version": dist.version})
    found.sort(key=lambda d: d["name"])
    return found


def _version(module_name: str) -> str | None:
    try:
        module = __import__(module_name)
    except Exception:
        return None
    return getattr(module, "__version__", None)


def _error(exc: BaseException) -> dict[str, str]:
    return {
        "type": type(exc).__name__,
        "message": str(exc).strip().splitlines()[0][:2000] if str(exc).strip() else "",
    }


def _lower(jax: Any, f: Any, args: tuple[Any, ...], plat: str) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        jitted = f if hasattr(f, "trace") else jax.jit(f)
        jitted.trace(*args).lower(lowering_platforms=(plat,))
    except Exception as exc:
        return {"ok": False, "error": _error(exc), "seconds": round(time.perf_counter() - start, 4)}
    return {"ok": True, "method": "jit.trace.lower", "seconds": round(time.perf_counter() - start, 4)}


def _execute(jax: Any, f: Any, args: tuple[Any, ...], given: Any) -> dict[str, Any]:
    """Compile the case for the local device and run it (stage of any failure).

    It runs on the case's ``run_args`` where it defines them, else on arrays of ones.
    """
    import numpy as np

    start = time.perf_counter()
    stage = "inputs"
    try:
        concrete = (
            tuple(given)
            if given is not None
            else tuple(
                jax.device_put(np.ones(a.shape, a.dtype), getattr(a, "sharding", None))
                if isinstance(a, jax.ShapeDtypeStruct)
                else a
                for a in args
            )
        )
        jitted = f if hasattr(f, "trace") else jax.jit(f)
        stage = "lower"
        lowered = jitted.trace(*concrete).lower()
        stage = "compile"
        compiled = lowered.compile()
        stage = "run"
        jax.block_until_ready(compiled(*concrete))
    except Exception as exc:
        return {
            "ok": False,
            "stage": stage,
            "error": _error(exc),
            "seconds": round(time.perf_counter() - start, 4),
        }
    return {"ok": True, "seconds": round(time.perf_counter() - start, 4)}


def _missing(qualnames: list[str]) -> str | None:
    """The first of ``qualnames`` this jax does not have (modules imported as needed).

    ``name(keyword)`` asks for a function that accepts ``keyword``.
    """
    import importlib
    import inspect

    for required in qualnames:
        qualname, _, keyword = required.rstrip(")").partition("(")
        parts = qualname.split(".")
        try:
            obj: Any = importlib.import_module(parts[0])
        except ImportError:
            return required
        for i, part in enumerate(parts[1:], 2):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                except ImportError:
                    return required
        if keyword:
            try:
                if keyword not in inspect.signature(obj).parameters:
                    return required
            except (TypeError, ValueError):
                return required
    return None


def _scan_lowerings(jax: Any) -> dict[str, Any]:
    """Primitives whose lowerings exist only for some platforms (no default rule).

    Reads jax's lowering registry after importing every ``jax.experimental`` module
    (those that fail to import are counted, not fatal).
    """
    import importlib
    import pkgutil

    try:
        import jax.experimental
        from jax._src.interpreters import mlir

        defaults = mlir._lowerings
        specific = mlir._platform_specific_lowerings
    except (ImportError, AttributeError) as exc:
        return {"available": False, "reason": f"{type(exc).__name__}: {exc}"}
    failed = 0
    for info in pkgutil.walk_packages(jax.experimental.__path__, "jax.experimental."):
        try:
            importlib.import_module(info.name)
        except Exception:
            failed += 1
    limited: dict[str, list[str]] = {}
    for where, rules in specific.items():
        for prim in rules:
            if prim not in defaults:
                limited.setdefault(str(getattr(prim, "name", prim)), []).append(str(where).lower())
    return {
        "available": True,
        "failed_imports": failed,
        "limited": {name: sorted(set(p)) for name, p in sorted(limited.items())},
    }


def main() -> None:
    started = time.perf_counter()
    request = json.loads(sys.stdin.read() or "{}")
    n = int(request.get("devices", 2))
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()
    out: dict[str, Any] = {
        "schema": 1,
        "python": {"executable": sys.executable, "version": platform.python_version()},
    }
    import_start = time.perf_counter()
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError as exc:
        out["error"] = {
            "kind": "jax-missing",
            "message": f"jax is not installed in {sys.executable}",
            "detail": str(exc),
        }
        out["seconds"] = round(time.perf_counter() - started, 4)
        print(json.dumps(out))
        return
    out["import_seconds"] = round(time.perf_counter() - import_start, 4)
    out["jax"] = getattr(jax, "__version__", None)
    out["jaxlib"] = _version("jaxlib")
    out["plugins"] = _plugins()
    try:
        devices = jax.devices()
        out["default_backend"] = jax.default_backend()
        out["platform"] = devices[0].platform if devices else None
        out["devices"] = [str(d) for d in devices]
        out["device_kind"] = getattr(devices[0], "device_kind", None) if devices else None
    except Exception as exc:
        out["default_backend"] = None
        out["devices"] = []
        out["backend_error"] = _error(exc)
    if request.get("mode") in ("env", "scan"):
        if request.get("mode") == "scan":
            out["scan"] = _scan_lowerings(jax)
        out["seconds"] = round(time.perf_counter() - started, 4)
        print(json.dumps(out))
        return

    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    shard_map = getattr(jax, "shard_map", None)
    shard_map_from: str | None = "jax.shard_map"
    if shard_map is None:
        try:
            from jax.experimental.shard_map import shard_map

            shard_map_from = "jax.experimental.shard_map.shard_map"
        except ImportError:
            shard_map = None
            shard_map_from = None
    out["shard_map"] = shard_map_from
    mesh = None
    local_mesh = False  # whether the mesh's devices are the default backend's
    try:
        devices = jax.devices()
        local_mesh = len(devices) >= n
        if local_mesh and hasattr(jax, "make_mesh"):
            mesh = jax.make_mesh((n,), ("i",))
        else:
            # too few accelerators (one GPU): the host devices the flag above made serve
            # the cross-lowering, which needs only the mesh's shape
            import numpy as np
            from jax.sharding import Mesh

            mesh = Mesh(np.array((devices if local_mesh else jax.devices("cpu"))[:n]), ("i",))
    except Exception as exc:
        out["mesh_error"] = _error(exc)
    platforms = request.get("platforms", ["cpu", "cuda", "rocm", "tpu"])
    results: dict[str, Any] = {}
    for case in request.get("cases", []):
        scope: dict[str, Any] = {
            "jax": jax,
            "jnp": jnp,
            "lax": lax,
            "shard_map": shard_map,
            "mesh": mesh,
            "P": P,
            "NamedSharding": NamedSharding,
            "N": n,
        }
        entry: dict[str, Any] = {}
        absent = _missing(case.get("requires", []))
        if absent is not None:
            note = f"{absent} is not in jax {out['jax']}"
            results[case["id"]] = {p: {"ok": None, "absent": absent, "skipped": note} for p in platforms}
            continue
        try:
            exec(case["code"], scope)
            f, args = scope["f"], tuple(scope["args"])
        except Exception as exc:
            err = _error(exc)
            entry = {p: {"ok": False, "error": err, "stage": "build"} for p in platforms}
            results[case["id"]] = entry
            continue
        for plat in platforms:
            entry[plat] = _lower(jax, f, args, plat)
        if request.get("execute"):
            if "mesh" in case["code"] and not local_mesh:
                entry["execute"] = {"ok": None, "skipped": f"needs {n} devices of the default backend"}
            else:
                entry["execute"] = _execute(jax, f, args, scope.get("run_args"))
        results[case["id"]] = entry
        if case.get("run_local"):
            try:
                import numpy as np

                x = jax.device_put(np.arange(args[0].shape[0], dtype=np.float32), args[0].sharding)
                value = f(x)
                entry["local_run"] = {
                    "ok": True,
                    "backend": next(iter(x.devices())).platform,
                    "input": [float(v) for v in np.asarray(x)],
                    "output": [float(v) for v in np.asarray(value)],
                }
            except Exception as exc:
                entry["local_run"] = {"ok": False, "error": _error(exc)}
    out["cases"] = results
    out["seconds"] = round(time.perf_counter() - started, 4)
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:
        print(
            json.dumps(
                {
                    "schema": 1,
                    "error": {
                        "kind": "crash",
                        "message": f"{type(exc).__name__}: {exc}",
                        "detail": traceback.format_exc()[-4000:],
                    },
                }
            )
        )
