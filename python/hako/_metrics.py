"""get_metrics(): e2b's samples of a sandbox's usage, from ``hako events
--stats`` (its cgroups' CPU, memory and pids, hako's CPU and memory bounds,
and its disk limit's filesystem)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional


@dataclass
class SandboxMetrics:
    """One sample of a sandbox's usage; e2b's field names, and hako's own
    (``pids``, ``pids_limit``, ``cpu_time``) after them."""

    timestamp: datetime  # when it was taken (UTC, this machine's clock)
    # The CPU the sandbox used since the sample before (the first one: since
    # it started), in percent of cpu_count
    cpu_used_pct: float
    # The CPUs it may use: those its process may run on, bounded by its CPU
    # quota (--cpus 1.5 gives 1.5: e2b's is a whole number of vCPUs)
    cpu_count: float
    mem_used: int  # its memory cgroup's usage less the inactive page cache
    mem_total: int  # its memory limit, or the host's memory when that is less
    mem_cache: int  # the page cache charged to it
    # Its disk limit's filesystem (the data dir: /work, an image's writable
    # layer), used and in all; None without a disk limit (--disk none)
    disk_used: Optional[int]
    disk_total: Optional[int]
    pids: Optional[int] = None  # processes now (its pids cgroup)
    pids_limit: Optional[int] = None  # None: no limit
    cpu_time: float = 0.0  # CPU seconds it used since it started


def _int(obj: Any, *keys: str) -> Optional[int]:
    for k in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return int(obj) if isinstance(obj, (int, float)) and not isinstance(obj, bool) else None


class MetricsHistory:
    """The samples one sandbox object took (hako keeps none: no daemon)."""

    def __init__(self) -> None:
        self.samples: List[SandboxMetrics] = []

    def add(self, event: Dict[str, Any], now: datetime, started: Optional[datetime]) -> SandboxMetrics:
        """A sample from one ``events --stats`` object taken at ``now``."""
        data = event.get("data") or {}
        cpu = data.get("cpu") or {}
        mem = data.get("memory") or {}
        raw = mem.get("raw") or {}
        disk = data.get("disk")
        cpu_ns = _int(cpu, "usage", "total") or 0
        limit = cpu.get("limit")
        cpu_count = float(limit) if isinstance(limit, (int, float)) and limit > 0 else 1.0
        # cgroup v2 names the page cache "file", v1 "total_cache" (with its
        # descendants) or "cache"; the inactive part is reclaimable first.
        cache = _int(raw, "file") or _int(raw, "total_cache") or _int(raw, "cache") or 0
        inactive = _int(raw, "inactive_file") or _int(raw, "total_inactive_file") or 0
        usage = _int(mem, "usage", "usage") or 0
        prev = self.samples[-1] if self.samples else None
        since = prev.timestamp if prev else started
        used_ns = cpu_ns - int(prev.cpu_time * 1e9) if prev else cpu_ns
        wall = (now - since).total_seconds() if since else 0.0
        pct = 100.0 * used_ns / 1e9 / (wall * cpu_count) if wall > 0 else 0.0
        pids_limit = _int(data, "pids", "limit")
        m = SandboxMetrics(
            timestamp=now,
            cpu_used_pct=round(max(0.0, pct), 2) if math.isfinite(pct) else 0.0,
            cpu_count=cpu_count,
            mem_used=max(0, usage - inactive),
            mem_total=_int(mem, "total") or _int(mem, "usage", "limit") or 0,
            mem_cache=cache,
            disk_used=_int(disk, "usage") if isinstance(disk, dict) else None,
            disk_total=_int(disk, "limit") if isinstance(disk, dict) else None,
            pids=_int(data, "pids", "current"),
            pids_limit=pids_limit if pids_limit else None,
            cpu_time=cpu_ns / 1e9,
        )
        self.samples.append(m)
        return m

    def between(self, start: Optional[datetime], end: Optional[datetime]) -> List[SandboxMetrics]:
        def aware(t: Optional[datetime]) -> Optional[datetime]:
            return t.astimezone(timezone.utc) if t is not None else None  # naive: local time, as e2b's

        lo, hi = aware(start), aware(end)
        return [m for m in self.samples if (lo is None or m.timestamp >= lo) and (hi is None or m.timestamp <= hi)]
