"""All accept6 leak cases, by name: eight families, each built from its own seeded generators."""

from __future__ import annotations

from tests.corpora.accept6 import (
    leaks_ci,
    leaks_cloud,
    leaks_code,
    leaks_config,
    leaks_db,
    leaks_host,
    leaks_k8s,
    leaks_vendor,
)
from tests.corpora.accept6.values import LeakCase

FAMILIES = (leaks_cloud, leaks_k8s, leaks_ci, leaks_db, leaks_config, leaks_vendor, leaks_host, leaks_code)


def _all() -> dict[str, LeakCase]:
    cases: dict[str, LeakCase] = {}
    for module in FAMILIES:
        for name, case in module.build().cases.items():
            assert name not in cases, name
            cases[name] = case
    return cases


LEAK_CASES: dict[str, LeakCase] = _all()
