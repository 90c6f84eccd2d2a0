"""Turn a Config into the core objects (catalog, ...). Packages never import config; this module does."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.config_view import AnyConfig, ApplicationView, ConfigError
from bot.fisk.digest import path_identity
from bot.fisk.environment import scrub_environment
from bot.fisk.introspect import IntrospectionError, introspect_with_digest
from bot.runner.call import ExecutionLimits
from bot.sanitize.redact import Redactor, build_redactor
from bot.sanitize.secret_argv import SecretArgvShapes
from bot.tools.catalog import AppSpec, Catalog, CatalogError, LoadedApplication, build_catalog
from bot.tools.selection import SelectionError
from bot.tools.tool import AppSettings

if TYPE_CHECKING:  # a runner reads a validated view of it (config_view) and imports no pydantic
    from bot.config import ApplicationConfig

log = logging.getLogger(__name__)


def app_spec(app: ApplicationConfig | ApplicationView, index: int, source: str) -> AppSpec:
    label = f"{source}: applications[{index}]"
    try:
        include = app.include.build(f"{label}.include")
        exclude = app.exclude.build(f"{label}.exclude")
    except SelectionError as exc:
        raise ConfigError(str(exc)) from None
    settings = AppSettings(
        binary=app.binary,
        timeout_seconds=app.timeout_seconds,
        working_dir=app.working_dir,
        env=dict(app.env),
        max_concurrency=app.max_concurrency,
    )
    return AppSpec(settings=settings, alias=app.alias, include=include, exclude=exclude,
                   global_flags=tuple(app.global_flags))


def load_catalog(config: AnyConfig) -> Catalog:
    """Introspect every configured application and select its tools; raises ConfigError or IntrospectionError.

    Each tool carries the digest of the binary bytes that were introspected and the hash of the JSON, which
    proposals record and decisions sign."""
    apps: Sequence[ApplicationConfig | ApplicationView] = config.applications
    specs = [app_spec(app, i, config.source) for i, app in enumerate(apps)]

    def load(settings: AppSettings) -> LoadedApplication:
        model, digest, model_hash = introspect_with_digest(
            settings.binary, sensitive_env_vars=config.sensitive_env_vars, extra_env=settings.env
        )
        return LoadedApplication(model, digest, model_hash)

    try:
        return build_catalog(specs, load)
    except CatalogError as exc:
        raise ConfigError(f"{config.source}: {exc}") from None


class CatalogSource:
    """The current catalog, rebuilt when a configured binary changes on disk.

    An upgraded tool then works for new proposals without a restart, and the runner resolves calls against
    the same fresh catalog. Calls approved for the previous bytes are refused by the runner (their digest no
    longer matches). A binary that breaks (cannot be introspected) keeps the previous catalog and logs why.
    """

    def __init__(self, config: AnyConfig, catalog: Catalog | None = None) -> None:
        self.config = config
        self._seen = self._identities()
        self._catalog = catalog if catalog is not None else load_catalog(config)
        self._lock = asyncio.Lock()

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    def _identities(self) -> dict[str, tuple[int, int, int, int, int] | None]:
        return {app.binary: path_identity(app.binary) for app in self.config.applications}

    async def refresh(self) -> bool:
        """Rebuild the catalog if a binary changed since the last build; True when it was rebuilt."""
        async with self._lock:
            # inline: one stat per configured binary costs microseconds; this runs before every call, where a
            # hop to a worker thread cost more than the stats (rebuilding, below, stays in a thread)
            now = self._identities()
            if now == self._seen:
                return False
            changed = sorted(b for b in now if now[b] != self._seen.get(b))
            self._seen = now
            try:
                self._catalog = await asyncio.to_thread(load_catalog, self.config)
            except (ConfigError, IntrospectionError) as exc:
                log.error("binary changed (%s) but the catalog cannot be rebuilt, keeping the previous one: %s",
                          ", ".join(changed), exc)
                return False
            log.info("binary changed (%s): catalog rebuilt, %d tools", ", ".join(changed), len(self._catalog))
            return True


def text_redactor(config: AnyConfig) -> Redactor:
    """The redactor for text shown outside tool output (alert cards, briefs, timeline exports): the same as
    tool output gets, so the values of this process's credentials and of the operator's ``sensitive_env_vars``,
    and the ``execution.redact_patterns``, are scrubbed too (memoized by ``build_redactor``)."""
    credentials = scrub_environment(None, config.sensitive_env_vars).removed_values.values()
    return build_redactor(credentials, config.execution.redact_patterns)


def execution_limits(config: AnyConfig) -> ExecutionLimits:
    ex = config.execution
    run_as = config.runner.run_as
    return ExecutionLimits(
        max_timeout_seconds=ex.max_timeout_seconds,
        kill_grace_seconds=ex.kill_grace_seconds,
        output_limit_bytes=ex.output_limit_bytes,
        redact_patterns=tuple(ex.redact_patterns),
        sensitive_env_vars=tuple(config.sensitive_env_vars),
        run_as=(run_as.uid, run_as.gid) if run_as is not None else None,
        secret_output=SecretArgvShapes.of(ex.secret_output.commands, ex.secret_output.field_options,
                                          ex.secret_output.query_options, ex.secret_output.reveal_options),
    )
