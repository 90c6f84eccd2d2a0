"""Counters, gauges and histograms in Prometheus's text exposition format (0.0.4), without ``prometheus_client``.

Every role records a dozen metrics and serves them on ``/metrics``; that is all of Prometheus a process needs.
``prometheus_client`` also brings its HTTP servers, WSGI/ASGI adapters, push gateway and OpenMetrics parser:
importing it keeps +2.3 MiB in a runner (39 modules, among them ``http.server``, ``wsgiref`` and
``urllib.request``: README "Resident memory"), a third of what stood between a runner and its 50 MiB target.
The names, types, label escaping and sample suffixes (``_total``, ``_bucket``/``_sum``/``_count``) are the ones
Prometheus scrapes; the tests read this module's output with ``prometheus_client``'s own parser.

This module imports nothing of the bot, so every package may record into it.
"""

from __future__ import annotations

import gc
import math
import os
import re
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")

#: One sample: (name, labels, value).
Sample = tuple[str, dict[str, str], float]


def _number(value: float) -> str:
    """A sample value as Prometheus writes it (Go's float syntax for the special values)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def _label_value(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def render(samples: Iterable[Sample]) -> str:
    """Sample lines, one per sample; labels sorted by name, as ``prometheus_client`` writes them (so a line reads
    the same whichever order the metric declared its labels in)."""
    lines = []
    for name, labels, value in samples:
        shown = ",".join(f'{key}="{_label_value(val)}"' for key, val in sorted(labels.items()))
        lines.append(f"{name}{{{shown}}} {_number(value)}\n" if shown else f"{name} {_number(value)}\n")
    return "".join(lines)


class Family:
    """What a registry asks of every metric or collector: its HELP/TYPE header and its samples."""

    name: str
    documentation: str
    kind: str

    def samples(self) -> Iterator[Sample]:
        raise NotImplementedError

    def sample_names(self) -> tuple[str, ...]:
        """Every sample name this family writes (its own name included): no other family may write one."""
        return (self.name,)

    def exposition(self) -> str:
        help_text = self.documentation.replace("\\", r"\\").replace("\n", r"\n")
        return f"# HELP {self.name} {help_text}\n# TYPE {self.name} {self.kind}\n" + render(self.samples())


class Registry:
    """The families one process exports, in registration order; a sample name is written by one family only
    (as ``prometheus_client`` refuses duplicated time series): a gauge named like a histogram's ``_count`` would
    put one series under two TYPE lines, and Prometheus would keep only one of its values."""

    def __init__(self) -> None:
        self._families: dict[str, Family] = {}
        self._writers: dict[str, str] = {}  # sample name -> the family that writes it
        self._lock = threading.Lock()

    def register(self, family: Family) -> None:
        with self._lock:
            if family.name in self._families:
                raise ValueError(f"metric {family.name!r} is registered already")
            for name in family.sample_names():
                if name in self._writers:
                    raise ValueError(f"metric {family.name!r} would write {name!r}, written by "
                                     f"{self._writers[name]} already")
            self._families[family.name] = family
            self._writers.update(dict.fromkeys(family.sample_names(), family.name))

    def exposition(self) -> bytes:
        """The ``/metrics`` body. A lone surrogate (JSON's ``"\\ud800"`` decodes to one) in a label value is
        written as ``?``: encoding it strictly would fail the whole scrape, and Prometheus refuses a body that
        is not UTF-8."""
        with self._lock:
            families = list(self._families.values())
        return "".join(family.exposition() for family in families).encode("utf-8", "replace")

    def get_sample_value(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        """The value of the sample named ``name`` with exactly these labels, None when there is none."""
        wanted = labels or {}
        with self._lock:
            families = list(self._families.values())
        for family in families:
            for sample_name, sample_labels, value in family.samples():
                if sample_name == name and sample_labels == wanted:
                    return value
        return None


class _Value:
    """One number behind a lock: children are updated from the event loop and from executor threads alike."""

    def __init__(self) -> None:
        self._value = 0.0
        self._lock = threading.Lock()

    def add(self, amount: float) -> None:
        with self._lock:
            self._value += amount

    def set(self, value: float) -> None:
        with self._lock:
            self._value = float(value)

    @property
    def value(self) -> float:
        with self._lock:
            return self._value


class CounterChild(_Value):
    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("a counter only goes up")
        self.add(amount)


class GaugeChild(_Value):
    def inc(self, amount: float = 1.0) -> None:
        self.add(amount)

    def dec(self, amount: float = 1.0) -> None:
        self.add(-amount)


class HistogramChild:
    """Observations counted into cumulative ``le`` buckets, with their sum and count."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self._counts = [0] * len(bounds)  # per bucket, not cumulative; +Inf is the count
        self._sum, self._count = 0.0, 0
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        with self._lock:
            self._sum += value
            self._count += 1
            for i, bound in enumerate(self.bounds):
                if value <= bound:
                    self._counts[i] += 1
                    break

    def snapshot(self) -> tuple[list[int], float, int]:
        with self._lock:
            return list(self._counts), self._sum, self._count


Child = TypeVar("Child", CounterChild, GaugeChild, HistogramChild)


class _Metric(Family, Generic[Child]):
    """A metric with optional label names: ``labels(*values)`` gives (and keeps) the child for those values; a
    metric without label names is its own single child."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = (),
                 registry: Registry | None = None) -> None:
        if not _NAME.fullmatch(name):
            raise ValueError(f"invalid metric name {name!r}")
        for label in labelnames:
            if not _LABEL.fullmatch(label) or label.startswith("__") or label == "le":
                raise ValueError(f"invalid label name {label!r} for {name}")
        self.name, self.documentation, self.labelnames = name, documentation, tuple(labelnames)
        self._children: dict[tuple[str, ...], Child] = {}
        self._lock = threading.Lock()
        if not self.labelnames:
            self._children[()] = self._new_child()
        if registry is not None:
            registry.register(self)

    def _new_child(self) -> Child:
        raise NotImplementedError

    def labels(self, *values: str) -> Child:
        if not self.labelnames:
            raise ValueError(f"{self.name} has no labels")
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name} takes labels {self.labelnames}, got {len(values)} values")
        key = tuple(str(value) for value in values)
        with self._lock:
            child = self._children.get(key)
            if child is None:
                child = self._children[key] = self._new_child()
            return child

    def _only(self) -> Child:
        if self.labelnames:
            raise ValueError(f"{self.name} has labels {self.labelnames}: call labels() first")
        return self._children[()]

    def _labelled(self) -> list[tuple[dict[str, str], Child]]:
        with self._lock:
            return [(dict(zip(self.labelnames, key, strict=True)), child) for key, child in self._children.items()]


class Counter(_Metric[CounterChild]):
    """A count that only goes up. As Prometheus names counters, the name ends in ``_total`` (given or not). No
    ``_created`` samples: Prometheus ignores them in this format (``prometheus_client`` writes them as gauges)."""

    kind = "counter"

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = (),
                 registry: Registry | None = None) -> None:
        super().__init__(name if name.endswith("_total") else f"{name}_total", documentation, labelnames, registry)

    def _new_child(self) -> CounterChild:
        return CounterChild()

    def inc(self, amount: float = 1.0) -> None:
        self._only().inc(amount)

    def samples(self) -> Iterator[Sample]:
        for labels, child in self._labelled():
            yield self.name, labels, child.value


class Gauge(_Metric[GaugeChild]):
    kind = "gauge"

    def _new_child(self) -> GaugeChild:
        return GaugeChild()

    def set(self, value: float) -> None:
        self._only().set(value)

    def samples(self) -> Iterator[Sample]:
        for labels, child in self._labelled():
            yield self.name, labels, child.value


class Histogram(_Metric[HistogramChild]):
    kind = "histogram"

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = (),
                 registry: Registry | None = None, buckets: Sequence[float] = ()) -> None:
        bounds = tuple(sorted(float(b) for b in buckets if not math.isinf(b)))
        if not bounds or len(set(bounds)) != len(bounds):
            raise ValueError(f"{name}: buckets must be distinct finite bounds, at least one")
        self.bounds = bounds
        super().__init__(name, documentation, labelnames, registry)

    def _new_child(self) -> HistogramChild:
        return HistogramChild(self.bounds)

    def sample_names(self) -> tuple[str, ...]:
        return self.name, f"{self.name}_bucket", f"{self.name}_count", f"{self.name}_sum"

    def observe(self, value: float) -> None:
        self._only().observe(value)

    def samples(self) -> Iterator[Sample]:
        for labels, child in self._labelled():
            counts, total, count = child.snapshot()
            cumulative = 0
            for bound, in_bucket in zip(self.bounds, counts, strict=True):
                cumulative += in_bucket
                yield f"{self.name}_bucket", {**labels, "le": _number(bound)}, float(cumulative)
            yield f"{self.name}_bucket", {**labels, "le": "+Inf"}, float(count)
            yield f"{self.name}_count", labels, float(count)
            yield f"{self.name}_sum", labels, total


class Collected(Family):
    """A family whose samples are read when scraped (process and interpreter figures)."""

    def __init__(self, name: str, documentation: str, kind: str, read: Callable[[], Iterable[Sample]],
                 registry: Registry | None = None) -> None:
        self.name, self.documentation, self.kind, self._read = name, documentation, kind, read
        if registry is not None:
            registry.register(self)

    def samples(self) -> Iterator[Sample]:
        yield from self._read()


def _process_stat() -> list[bytes] | None:
    """The fields of /proc/self/stat after the command name (field 3 onwards), None without /proc."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[-1].split()
    except OSError:
        return None


def _boot_time() -> float:
    with open("/proc/stat", "rb") as stat:
        return next(float(line.split()[1]) for line in stat if line.startswith(b"btime "))


def _fds() -> Iterator[Sample]:
    try:
        yield "process_open_fds", {}, float(len(os.listdir("/proc/self/fd")))
    except OSError:
        return


def _max_fds() -> Iterator[Sample]:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    yield "process_max_fds", {}, float(soft) if soft != resource.RLIM_INFINITY else math.inf


def register_process_metrics(registry: Registry) -> None:
    """What every Prometheus client exports by default, under the same names: ``process_*`` (memory, CPU, open
    fds, start time; from /proc, absent without it), ``python_info`` and ``python_gc_*`` (per generation)."""
    ticks = float(os.sysconf("SC_CLK_TCK"))
    page = resource.getpagesize()
    try:
        started = float(_process_stat()[19]) / ticks + _boot_time()  # type: ignore[index]
    except (OSError, TypeError, IndexError, StopIteration, ValueError):
        started = time.time()

    def stat_field(name: str, read: Callable[[list[bytes]], float]) -> Callable[[], Iterator[Sample]]:
        def samples() -> Iterator[Sample]:
            fields = _process_stat()
            if fields is not None:
                yield name, {}, read(fields)
        return samples

    Collected("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge",
              stat_field("process_virtual_memory_bytes", lambda f: float(f[20])), registry)
    Collected("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge",
              stat_field("process_resident_memory_bytes", lambda f: float(f[21]) * page), registry)
    Collected("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge",
              lambda: iter([("process_start_time_seconds", {}, started)]), registry)
    Collected("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter",
              stat_field("process_cpu_seconds_total", lambda f: (float(f[11]) + float(f[12])) / ticks), registry)
    Collected("process_open_fds", "Number of open file descriptors.", "gauge", _fds, registry)
    Collected("process_max_fds", "Maximum number of open file descriptors.", "gauge", _max_fds, registry)
    major, minor, patch = (str(part) for part in sys.version_info[:3])
    implementation = {"cpython": "CPython", "pypy": "PyPy"}.get(sys.implementation.name, sys.implementation.name)
    info = {"implementation": implementation, "major": major, "minor": minor, "patchlevel": patch,
            "version": f"{major}.{minor}.{patch}"}
    Collected("python_info", "Python platform information", "gauge", lambda: iter([("python_info", info, 1.0)]),
              registry)
    for name, key, documentation in (
        ("python_gc_objects_collected_total", "collected", "Objects collected during gc"),
        ("python_gc_objects_uncollectable_total", "uncollectable", "Uncollectable objects found during GC"),
        ("python_gc_collections_total", "collections", "Number of times this generation was collected"),
    ):
        def per_generation(name: str = name, key: str = key) -> Iterator[Sample]:
            for generation, stats in enumerate(gc.get_stats()):
                yield name, {"generation": str(generation)}, float(stats[key])
        Collected(name, documentation, "counter", per_generation, registry)
