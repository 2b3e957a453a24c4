"""Wall time of the backend probe in this interpreter (median of 5 runs, plus the first).

Run: python bench/probe_bench.py
"""

from __future__ import annotations

import statistics
import sys
import time

from jaxtarget.probe import Ask, run_probe, verdict_line


def main() -> None:
    times = []
    result = None
    for _ in range(6):
        t = time.perf_counter()
        result = run_probe(sys.executable, timeout=120)
        times.append(time.perf_counter() - t)
    assert result is not None
    env = []
    for _ in range(3):
        t = time.perf_counter()
        run_probe(sys.executable, timeout=120, ask=Ask(env_only=True))
        env.append(time.perf_counter() - t)
    print(f"probe result: {verdict_line(result)}")
    print(f"full probe, first run:        {times[0]:.2f} s")
    print(f"full probe, median of next 5: {statistics.median(times[1:]):.2f} s   (goal <= 5 s)")
    print(f"  of which import jax:        {result.data.get('import_seconds'):.2f} s")
    print(f"environment probe, median:    {statistics.median(env):.2f} s")


if __name__ == "__main__":
    main()
