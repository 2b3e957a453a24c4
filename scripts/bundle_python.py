"""Install the server and its dependencies into bundled/libs for every Python in requires-python.

pip evaluates environment markers for the Python that runs it, whatever `--python-version`
says, so a bundle packed on 3.11 would lack what 3.10 needs (tomli, exceptiongroup). Here
every requirement of every bundled distribution whose marker holds on any supported Python
is bundled too, until nothing is missing; all as pure-Python wheels, so that one bundle
serves them all (the newer Pythons never import the backports).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from email.parser import Parser
from pathlib import Path

from pip._vendor.packaging.markers import Marker
from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LIBS = ROOT / "bundled" / "libs"
NEWEST_MINOR = 14


def _oldest() -> tuple[int, int]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    m = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)"', text, re.M)
    if not m:
        raise SystemExit('pyproject.toml: requires-python must read ">=X.Y"')
    return int(m.group(1)), int(m.group(2))


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True)


def _pure(oldest: tuple[int, int]) -> list[str]:
    """pip options: pure-Python wheels for the oldest supported Python, into bundled/libs."""
    version = f"{oldest[0]}.{oldest[1]}"
    target = ["--no-compile", "--upgrade", "--target", str(LIBS)]
    pure = ["--implementation", "py", "--abi", "none", "--only-binary=:all:"]
    return [*target, "--python-version", version, *pure]


def _holds_somewhere(marker: Marker | None, oldest: tuple[int, int]) -> bool:
    if marker is None:
        return True
    for minor in range(oldest[1], NEWEST_MINOR + 1):
        env = {"python_version": f"3.{minor}", "python_full_version": f"3.{minor}.0", "extra": ""}
        if marker.evaluate(env):
            return True
    return False


def _missing(oldest: tuple[int, int]) -> list[str]:
    installed: set[str] = set()
    wanted: dict[str, str] = {}
    for meta in LIBS.glob("*.dist-info/METADATA"):
        message = Parser().parsestr(meta.read_text(encoding="utf-8"))
        installed.add(canonicalize_name(message["Name"]))
        for line in message.get_all("Requires-Dist") or []:
            req = Requirement(line)
            if _holds_somewhere(req.marker, oldest):
                req.marker = None
                wanted.setdefault(canonicalize_name(req.name), str(req))
    return [spec for name, spec in sorted(wanted.items()) if name not in installed]


def main() -> None:
    oldest = _oldest()
    subprocess.run(["rm", "-rf", str(LIBS)], check=True)
    with tempfile.TemporaryDirectory() as wheels:
        _pip("wheel", "--no-deps", "-w", wheels, str(ROOT))
        (wheel,) = Path(wheels).glob("jaxtarget-*.whl")
        _pip("install", *_pure(oldest), str(wheel))
    while missing := _missing(oldest):
        _pip("install", *_pure(oldest), "--no-deps", *missing)
    print(f"bundled/libs: for Python {oldest[0]}.{oldest[1]} and newer")


if __name__ == "__main__":
    main()
