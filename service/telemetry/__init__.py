"""OpenTelemetry export of model calls and imports (docs/guides/telemetry.md).

Off unless `configure` is given an OTLP endpoint: then every function here returns at
once, and OpenTelemetry is not even imported. Depends on service/model only.
"""
from .export import configure, enabled, flush, use
from .spans import export_call, export_count, export_import

__all__ = ["configure", "enabled", "export_call", "export_count", "export_import", "flush", "use"]
