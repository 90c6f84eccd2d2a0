"""Turn a Config into the core objects (catalog, ...). Packages never import config; this module does."""

from __future__ import annotations

from bot.config import ApplicationConfig, Config, ConfigError
from bot.fisk.introspect import introspect
from bot.fisk.model import ApplicationModel
from bot.runner.call import ExecutionLimits
from bot.tools.catalog import AppSpec, Catalog, CatalogError, build_catalog
from bot.tools.selection import SelectionError
from bot.tools.tool import AppSettings


def app_spec(app: ApplicationConfig, index: int, source: str) -> AppSpec:
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


def load_catalog(config: Config) -> Catalog:
    """Introspect every configured application and select its tools; raises ConfigError or IntrospectionError."""
    specs = [app_spec(app, i, config.source) for i, app in enumerate(config.applications)]

    def load(settings: AppSettings) -> ApplicationModel:
        return introspect(settings.binary, sensitive_env_vars=config.sensitive_env_vars, extra_env=settings.env)

    try:
        return build_catalog(specs, load)
    except CatalogError as exc:
        raise ConfigError(f"{config.source}: {exc}") from None


def execution_limits(config: Config) -> ExecutionLimits:
    ex = config.execution
    return ExecutionLimits(
        max_timeout_seconds=ex.max_timeout_seconds,
        kill_grace_seconds=ex.kill_grace_seconds,
        output_limit_bytes=ex.output_limit_bytes,
        redact_patterns=tuple(ex.redact_patterns),
        sensitive_env_vars=tuple(config.sensitive_env_vars),
    )
