"""Every accept5 leak case, rendered: ``LEAK_CASES`` (name -> LeakCase)."""

from __future__ import annotations

from tests.corpora.accept5 import (
    leaks_apps,
    leaks_ci,
    leaks_cloud,
    leaks_configs,
    leaks_db,
    leaks_k8s,
    leaks_more,
    leaks_stores,
)
from tests.corpora.accept5.values import LeakCase, render

_FAMILIES = {"cloud": leaks_cloud.CASES, "k8s": leaks_k8s.CASES, "db": leaks_db.CASES, "ci": leaks_ci.CASES,
             "configs": leaks_configs.CASES, "stores": leaks_stores.CASES, "apps": leaks_apps.CASES,
             "more": leaks_more.CASES}


def _all() -> dict[str, LeakCase]:
    cases: dict[str, LeakCase] = {}
    for family, templates in _FAMILIES.items():
        for name, template in templates:
            assert name not in cases, f"duplicate case name {name}"
            cases[name] = render(name, family, template)
    return cases


LEAK_CASES = _all()
