"""The client and the service in one process, the client imported first: the service's
GraphQL schema still builds from its own types (the generated models share the schema's
type names; see ctxdag/client/codegen_plugin.py)."""
from __future__ import annotations

import subprocess
import sys

IMPORT_CLIENT_THEN_SCHEMA = """
import ctxdag.client
from service.api.schema import schema
print(len(schema.as_str()) > 0)
"""


def test_the_service_schema_builds_after_the_client_was_imported():
    done = subprocess.run([sys.executable, "-c", IMPORT_CLIENT_THEN_SCHEMA],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "True"
