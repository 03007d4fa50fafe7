"""Settings: the one place the environment is read; a malformed setting is BAD_CONFIG."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.config import DEFAULT_CONTEXT_WINDOW, Settings
from service.errors import ConfigurationError


def bad_config(env) -> ConfigurationError:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env(env)
    assert caught.value.code == "BAD_CONFIG"
    return caught.value


def test_defaults():
    settings = Settings.from_env({})
    assert settings.anthropic is None
    assert settings.context_window == DEFAULT_CONTEXT_WINDOW == 200_000
    assert (settings.keep_recent_tokens, settings.auto_compact_ratio) == (20_000, 0.8)
    assert settings.tenant == "local" and settings.api_tokens == {}
    assert settings.local_neo4j_port == 7687 and settings.neo4j_uri is None
    assert not hasattr(settings, "env")  # nothing is passed through for others to read


def test_empty_variables_count_as_unset():
    settings = Settings.from_env({"CTXDAG_NEO4J_PORT": "", "CTXDAG_TENANT": " ",
                                  "CTXDAG_AUTO_COMPACT_RATIO": "", "NEO4J_URI": "",
                                  "ANTHROPIC_API_KEY": "  "})
    assert settings.local_neo4j_port == 7687 and settings.tenant == "local"
    assert settings.auto_compact_ratio == 0.8 and settings.neo4j_uri is None
    assert settings.anthropic is None


def test_the_context_window_is_the_explicit_setting_else_the_providers():
    anthropic = {"ANTHROPIC_API_KEY": "k", "CTXDAG_KEEP_RECENT_TOKENS": "100"}
    # Offline: CTXDAG_CONTEXT_WINDOW, else the default.
    assert Settings.from_env({"CTXDAG_CONTEXT_WINDOW": "50000"}).context_window == 50_000
    # Anthropic without an explicit window: the provider's window (its default, or as set).
    assert Settings.from_env(anthropic).context_window == 200_000
    assert Settings.from_env({**anthropic, "CTXDAG_ANTHROPIC_CONTEXT_WINDOW": "1000"}
                             ).context_window == 1000
    # An explicit CTXDAG_CONTEXT_WINDOW is never overridden by the provider's.
    both = Settings.from_env({**anthropic, "CTXDAG_ANTHROPIC_CONTEXT_WINDOW": "1000",
                              "CTXDAG_CONTEXT_WINDOW": "5000"})
    assert both.context_window == 5000 and both.anthropic.context_window == 1000


def test_the_summary_model_defaults_to_the_chat_model():
    assert Settings.from_env({"ANTHROPIC_API_KEY": "k", "CTXDAG_ANTHROPIC_MODEL": "claude-a"}
                             ).anthropic.summary_model == "claude-a"
    assert Settings.from_env({"ANTHROPIC_API_KEY": "k", "CTXDAG_ANTHROPIC_SUMMARY_MODEL": "b"}
                             ).anthropic.summary_model == "b"


@pytest.mark.parametrize("name, value, says", [
    ("CTXDAG_NEO4J_PORT", "seven", "must be an integer from 1 to 65535, got 'seven'"),
    ("CTXDAG_NEO4J_PORT", "70000", "must be an integer from 1 to 65535, got '70000'"),
    ("CTXDAG_NEO4J_PAGECACHE_MB", "0", "must be an integer of at least 1, got '0'"),
    ("CTXDAG_MAX_CONTENT_BYTES", "1.5", "must be an integer of at least 1, got '1.5'"),
    ("CTXDAG_MAX_METADATA_BYTES", "-1", "must be an integer of at least 1"),
    ("CTXDAG_MAX_CALL_READS", "many", "must be an integer of at least 1"),
    ("CTXDAG_CONTEXT_WINDOW", "0", "must be an integer of at least 1, got '0'"),
    ("CTXDAG_KEEP_RECENT_TOKENS", "-5", "must be an integer of at least 0, got '-5'"),
    ("CTXDAG_AUTO_COMPACT_RATIO", "0", "must be a number above 0 and at most 1, got '0'"),
    ("CTXDAG_AUTO_COMPACT_RATIO", "1.5", "must be a number above 0 and at most 1"),
    ("CTXDAG_AUTO_COMPACT_RATIO", "nan", "must be a number above 0 and at most 1"),
    ("CTXDAG_OPERATION_TIMEOUT_SECONDS", "soon", "must be a number above 0, got 'soon'"),
    ("CTXDAG_REQUEST_READ_TIMEOUT_SECONDS", "inf", "must be a number above 0"),
    ("CTXDAG_MAX_REQUEST_BYTES", "0", "must be an integer of at least 1"),
    ("CTXDAG_MAX_CONNECTIONS", "x", "must be an integer of at least 1"),
    ("CTXDAG_MAX_WEBSOCKETS", "0", "must be an integer of at least 1"),
    ("CTXDAG_MAX_SUBSCRIPTIONS_PER_SOCKET", "-2", "must be an integer of at least 1"),
    ("CTXDAG_BOOKMARK_WAIT_SECONDS", "0", "must be a number above 0, got '0'"),
])
def test_a_malformed_number_names_the_variable(name, value, says):
    error = bad_config({name: value})
    assert error.message.startswith(f"{name} {says}")
    assert error.details["variable"] == name


@pytest.mark.parametrize("name, value", [
    ("CTXDAG_ANTHROPIC_MAX_TOKENS", "lots"), ("CTXDAG_ANTHROPIC_MAX_TOKENS", "0"),
    ("CTXDAG_ANTHROPIC_CONTEXT_WINDOW", "0"), ("CTXDAG_ANTHROPIC_TIMEOUT", "0"),
    ("CTXDAG_ANTHROPIC_MAX_RETRIES", "-1"),
])
def test_a_malformed_anthropic_setting_names_the_variable(name, value):
    error = bad_config({"ANTHROPIC_API_KEY": "k", name: value})
    assert error.message.startswith(f"{name} must be") and repr(value) in error.message


def test_anthropic_settings_are_not_read_without_a_key():
    assert Settings.from_env({"CTXDAG_ANTHROPIC_MAX_TOKENS": "lots"}).anthropic is None


def test_a_kept_tail_that_never_fits_the_window_is_refused():
    error = bad_config({"CTXDAG_CONTEXT_WINDOW": "1000"})  # keeps 20,000 by default
    assert error.message.startswith(
        "CTXDAG_KEEP_RECENT_TOKENS (20000) must be below the automatic compaction point, "
        "800 tokens (CTXDAG_AUTO_COMPACT_RATIO 0.8 of the context window 1000 from "
        "CTXDAG_CONTEXT_WINDOW)")
    error = bad_config({"ANTHROPIC_API_KEY": "k", "CTXDAG_ANTHROPIC_CONTEXT_WINDOW": "1000"})
    assert "context window 1000 from CTXDAG_ANTHROPIC_CONTEXT_WINDOW" in error.message


@pytest.mark.parametrize("value", ["token", "=tenant", "token=", "a=b,,c"])
def test_malformed_api_tokens(value):
    error = bad_config({"CTXDAG_API_TOKENS": value})
    assert error.message.startswith("CTXDAG_API_TOKENS must look like token=tenant")
    assert "token=tenant," in error.message


def test_api_tokens_from_the_variable_and_the_file(tmp_path):
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"t1": "tenant-1"}))
    settings = Settings.from_env({"CTXDAG_API_TOKENS_FILE": str(path),
                                  "CTXDAG_API_TOKENS": " t2 = tenant-2 ,"})
    assert settings.api_tokens == {"t1": "tenant-1", "t2": "tenant-2"}


def test_a_bad_tokens_file_names_the_variable_and_the_file(tmp_path):
    missing = tmp_path / "missing.json"
    assert bad_config({"CTXDAG_API_TOKENS_FILE": str(missing)}).message == (
        f"CTXDAG_API_TOKENS_FILE: cannot read {missing}: No such file or directory")
    cases = {
        "prose.json": (b"tokens, honestly", "is not valid JSON: Expecting value"),
        "binary.json": (b'{"\xff": "x"}', "is not UTF-8 text (invalid byte at offset 2)"),
        "list.json": (b'["t1"]', "must be a JSON object mapping token strings to tenant ids"),
        "empty.json": (b'{"t1": ""}', "must be a JSON object mapping token strings to tenant ids"),
    }
    for name, (data, says) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        message = bad_config({"CTXDAG_API_TOKENS_FILE": str(path)}).message
        assert message.startswith(f"CTXDAG_API_TOKENS_FILE: {path} {says}"), message


def test_cors_origins_are_none_by_default_and_normalized():
    assert Settings.from_env({}).cors_origins == ()
    assert Settings.from_env({"CTXDAG_CORS_ORIGINS": " "}).cors_origins == ()
    settings = Settings.from_env({"CTXDAG_CORS_ORIGINS": (
        " http://localhost:5173, HTTP://LocalHost:5173/ ,https://App.Example.com:443,"
        "http://127.0.0.1:80,http://[0:0::1]:8080,https://app.example.com:8443")})
    assert settings.cors_origins == ("http://localhost:5173", "https://app.example.com",
                                     "http://127.0.0.1", "http://[::1]:8080",
                                     "https://app.example.com:8443")


@pytest.mark.parametrize("value", ["*", "http://localhost:5173,*", "https://*.example.com",
                                   "http://*"])
def test_a_wildcard_cors_origin_is_refused(value):
    error = bad_config({"CTXDAG_CORS_ORIGINS": value})
    assert error.message.startswith("CTXDAG_CORS_ORIGINS must name each origin it allows; "
                                    "a wildcard (")
    assert error.details["variable"] == "CTXDAG_CORS_ORIGINS"


@pytest.mark.parametrize("entry", [
    "localhost:5173", "//localhost:5173", "null", "ftp://files.example.com",
    "ws://localhost:5173", "http://localhost:5173/app", "http://localhost:5173?x=1",
    "http://localhost:5173#top", "http://user@localhost:5173", "http://localhost:99999",
    "http://localhost:port", "http://", "http://bad host", "http://-bad.example",
    "http://a..example", "http://[::g]:5173",
])
def test_a_malformed_cors_origin_names_the_variable_and_the_entry(entry):
    error = bad_config({"CTXDAG_CORS_ORIGINS": f"http://localhost:5173,{entry}"})
    assert error.message == (
        "CTXDAG_CORS_ORIGINS must be a comma-separated list of origins like "
        "http://localhost:5173 or https://app.example.com (http or https, a host, an optional "
        f"port, no path), got {entry!r}")
    assert error.details["variable"] == "CTXDAG_CORS_ORIGINS"


def test_bookmark_keys_in_hex_or_base64_the_first_one_first():
    import base64

    one, two = bytes(range(32)), bytes(range(100, 132))
    assert Settings.from_env({}).bookmark_keys == ()
    assert Settings.from_env({}).bookmark_wait_seconds == 10.0
    for text in (one.hex(), one.hex().upper(), base64.b64encode(one).decode(),
                 base64.urlsafe_b64encode(one).decode().rstrip("=")):
        assert Settings.from_env({"CTXDAG_BOOKMARK_KEY": text}).bookmark_keys == (one,)
    both = Settings.from_env({"CTXDAG_BOOKMARK_KEY": f" {two.hex()} , {one.hex()},{two.hex()}"})
    assert both.bookmark_keys == (two, one)
    assert one.hex() not in repr(both) and "bookmark_keys" not in repr(both)


@pytest.mark.parametrize("value", ["secret", "00" * 31, "00" * 33, "Zm9v",
                                   "not base64 at all, really not!!!!!!!!!!!!!!!"])
def test_a_malformed_bookmark_key_is_refused_without_echoing_it(value):
    error = bad_config({"CTXDAG_BOOKMARK_KEY": f"{'ab' * 32},{value}"})
    assert error.message.startswith("CTXDAG_BOOKMARK_KEY must be 32-byte keys, each as 64 "
                                    "hex digits or in base64")
    assert "key 2 is" in error.message and value not in error.message
    assert error.details["variable"] == "CTXDAG_BOOKMARK_KEY"


def test_the_tools_session_folders_are_where_each_tool_keeps_them():
    home = Path("/home/ada")
    assert Settings.from_env({"HOME": str(home)}).tool_session_folders == (
        home / ".claude/projects", home / ".pi/agent/sessions", home / ".codex/sessions",
        home / ".codex/archived_sessions")
    moved = Settings.from_env({"HOME": str(home), "CLAUDE_CONFIG_DIR": "/srv/claude",
                               "PI_CODING_AGENT_DIR": "~/pi", "CODEX_HOME": " /srv/codex "})
    assert moved.tool_session_folders == (
        Path("/srv/claude/projects"), Path("~/pi").expanduser() / "sessions",
        Path("/srv/codex/sessions"), Path("/srv/codex/archived_sessions"))


def test_only_config_reads_the_environment():
    service = Path(__file__).resolve().parents[2] / "service"
    readers = sorted(str(path.relative_to(service)) for path in service.rglob("*.py")
                     if any(word in path.read_text(encoding="utf-8")
                            for word in ("os.environ", "getenv(", "environ.get(")))
    assert readers == ["config.py"]


def test_the_settings_repr_shows_no_secret():
    settings = Settings.from_env({"CTXDAG_API_TOKENS": "s3cret-token=acme",
                                  "ANTHROPIC_API_KEY": "sk-ant-secret"})
    shown = repr(settings)
    assert "s3cret-token" not in shown and "sk-ant-secret" not in shown
