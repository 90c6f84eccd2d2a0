"""Our Prometheus exposition (``bot/metric_types.py``), read back with ``prometheus_client``'s own parser: what a
Prometheus server would scrape."""

from __future__ import annotations

import json
import math
import threading

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.metric_types import Counter, Gauge, Histogram, Registry, register_process_metrics


def scraped(registry: Registry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(registry.exposition().decode())
            for s in family.samples}


def test_counter_gauge_and_histogram_read_back_as_prometheus_parses_them() -> None:
    registry = Registry()
    calls = Counter("demo_calls_total", "Calls, by state", ["state"], registry=registry)
    plain = Counter("demo_plain", "A counter named without the suffix", registry=registry)
    depth = Gauge("demo_depth", "Depth", ["stage"], registry=registry)
    waits = Histogram("demo_wait_seconds", "Waits", buckets=(1, 5, 0.5), registry=registry)
    calls.labels("finished").inc()
    calls.labels("finished").inc(2)
    calls.labels("denied").inc()
    plain.inc()
    depth.labels("running").set(4)
    depth.labels("running").dec()
    depth.labels("queued").inc(2)
    for seconds in (0.2, 0.5, 3, 9):
        waits.observe(seconds)

    samples = scraped(registry)
    assert samples[("demo_calls_total", (("state", "finished"),))] == 3
    assert samples[("demo_calls_total", (("state", "denied"),))] == 1
    assert samples[("demo_plain_total", ())] == 1
    assert samples[("demo_depth", (("stage", "running"),))] == 3
    assert samples[("demo_depth", (("stage", "queued"),))] == 2
    # cumulative buckets, sorted bounds, +Inf equal to the count
    assert [samples[("demo_wait_seconds_bucket", (("le", le),))] for le in ("0.5", "1.0", "5.0", "+Inf")] == [
        2, 2, 3, 4]
    assert samples[("demo_wait_seconds_count", ())] == 4
    assert samples[("demo_wait_seconds_sum", ())] == pytest.approx(12.7)
    types = {f.name: f.type for f in text_string_to_metric_families(registry.exposition().decode())}
    assert types == {"demo_calls": "counter", "demo_plain": "counter", "demo_depth": "gauge",
                     "demo_wait_seconds": "histogram"}
    assert registry.get_sample_value("demo_calls_total", {"state": "finished"}) == 3


def test_sample_lines_are_written_as_prometheus_client_wrote_them() -> None:
    registry = Registry()
    deliveries = Counter("demo_deliveries_total", "By source and outcome", ["source", "outcome"], registry=registry)
    waits = Histogram("demo_seconds", "Waits", ["pool"], buckets=(0.25,), registry=registry)
    deliveries.labels("alertmanager", "new").inc()
    waits.labels("cmd").observe(0.1)
    lines = registry.exposition().decode().splitlines()
    assert 'demo_deliveries_total{outcome="new",source="alertmanager"} 1.0' in lines  # labels sorted by name
    assert 'demo_seconds_bucket{le="0.25",pool="cmd"} 1.0' in lines
    assert 'demo_seconds_bucket{le="+Inf",pool="cmd"} 1.0' in lines
    assert 'demo_seconds_sum{pool="cmd"} 0.1' in lines
    assert registry.get_sample_value("demo_calls_total", {"state": "expired"}) is None


def test_label_values_and_help_are_escaped() -> None:
    registry = Registry()
    odd = Gauge("demo_odd", 'Help with a \\ backslash\nand a newline', ["path"], registry=registry)
    value = 'C:\\dir "quoted"\nnext line'
    odd.labels(value).set(math.inf)
    text = registry.exposition().decode()
    assert '# HELP demo_odd Help with a \\\\ backslash\\nand a newline\n' in text
    (family,) = text_string_to_metric_families(text)
    (sample,) = family.samples
    assert sample.labels == {"path": value} and sample.value == math.inf


def test_misuse_is_refused_with_a_clear_error() -> None:
    registry = Registry()
    calls = Counter("demo_calls", "Calls", ["state"], registry=registry)
    with pytest.raises(ValueError, match="registered already"):
        Counter("demo_calls", "Again", registry=registry)
    with pytest.raises(ValueError, match="only goes up"):
        calls.labels("finished").inc(-1)
    with pytest.raises(ValueError, match=r"takes labels \('state',\), got 2"):
        calls.labels("a", "b")
    with pytest.raises(ValueError, match="call labels"):
        calls.inc()
    with pytest.raises(ValueError, match="has no labels"):
        Gauge("demo_plain", "Plain").labels("x")
    with pytest.raises(ValueError, match="invalid metric name"):
        Gauge("demo-dash", "Dash")
    with pytest.raises(ValueError, match="invalid label name"):
        Histogram("demo_h", "H", ["le"], buckets=(1,))
    with pytest.raises(ValueError, match="buckets"):
        Histogram("demo_h", "H", buckets=())
    assert registry.get_sample_value("demo_calls_total", {"state": "finished"}) == 0  # the refused inc added nothing
    empty = Registry()
    Counter("demo_none", "No child yet", ["state"], registry=empty)
    assert scraped(empty) == {}  # a labelled metric without children shows only its header


def test_increments_from_many_threads_are_all_counted() -> None:
    counter = Counter("demo_threads", "Threads")
    histogram = Histogram("demo_threads_seconds", "Threads", buckets=(1,))

    def work() -> None:
        for _ in range(5000):
            counter.inc()
            histogram.observe(0.5)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    registry = Registry()
    registry.register(counter)
    registry.register(histogram)
    samples = scraped(registry)
    assert samples[("demo_threads_total", ())] == 20000
    assert samples[("demo_threads_seconds_bucket", (("le", "1.0"),))] == 20000


def test_process_metrics_are_the_process_own_figures() -> None:
    registry = Registry()
    register_process_metrics(registry)
    samples = scraped(registry)
    with open("/proc/self/status") as status:
        rss = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))
    assert samples[("process_resident_memory_bytes", ())] == pytest.approx(rss, rel=0.2)
    assert samples[("process_cpu_seconds_total", ())] > 0
    assert samples[("process_open_fds", ())] >= 3
    assert samples[("process_max_fds", ())] >= samples[("process_open_fds", ())]
    import time

    assert 0 < time.time() - samples[("process_start_time_seconds", ())] < 3600
    assert samples[("python_gc_collections_total", (("generation", "0"),))] >= 0
    info = next(labels for (name, labels) in samples if name == "python_info")
    assert dict(info)["implementation"] == "CPython" and dict(info)["major"] == "3"


def test_a_label_value_that_is_not_valid_unicode_does_not_break_the_scrape() -> None:
    """JSON may carry a lone surrogate (``"\\ud800"`` decodes to one): had such a value (an alert source, a team
    id) become a label, encoding the body failed and every scrape of the process answered nothing."""
    registry = Registry()
    deliveries = Counter("demo_deliveries_total", "By source", ["source"], registry=registry)
    depth = Gauge("demo_depth", "Depth", registry=registry)
    deliveries.labels(json.loads('"team\\ud800x"')).inc()
    deliveries.labels('ok"}\ndemo_depth 99').inc()  # an attempt to add a line of its own
    depth.set(2)
    body = registry.exposition()
    assert body.decode("utf-8")  # valid UTF-8, as Prometheus requires of the whole body
    samples = scraped(registry)
    assert samples == {("demo_deliveries_total", (("source", "team?x"),)): 1.0,
                       ("demo_deliveries_total", (("source", 'ok"}\ndemo_depth 99'),)): 1.0,
                       ("demo_depth", ()): 2.0}


def test_a_metric_whose_samples_another_family_writes_is_refused() -> None:
    """A gauge named like a histogram's ``_count`` (or a histogram named like a counter) would write one sample
    name under two TYPE lines: Prometheus keeps one of the two values and counts the scrape's duplicates."""
    registry = Registry()
    Histogram("demo_wait_seconds", "Waits", buckets=(1,), registry=registry)
    Counter("demo_calls", "Calls", registry=registry)
    with pytest.raises(ValueError, match="demo_wait_seconds_count.*written by demo_wait_seconds"):
        Gauge("demo_wait_seconds_count", "Clash", registry=registry)
    Gauge("demo_depth_sum", "A gauge first", registry=registry)
    with pytest.raises(ValueError, match="demo_depth_sum.*written by demo_depth_sum"):
        Histogram("demo_depth", "Clash", buckets=(1,), registry=registry)
    with pytest.raises(ValueError, match="registered already"):
        Gauge("demo_calls_total", "Clash", registry=registry)
    Gauge("demo_wait", "No clash: a prefix of a histogram's name is its own", registry=registry)
    assert {f.name for f in text_string_to_metric_families(registry.exposition().decode())} == {
        "demo_wait_seconds", "demo_calls", "demo_depth_sum", "demo_wait"}
