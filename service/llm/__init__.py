"""The Anthropic model provider; only `service.llm.anthropic` touches the SDK.

Import the modules directly (`service.llm.anthropic`, `.anthropic_provider`,
`.anthropic_summarizer`, `.prompts`); this package re-exports nothing. The prompt's
provider-neutral message shape lives in service/turns/; llm depends on turns, never
the reverse. Settings come parsed from service/config.py; nothing here reads the
environment.
"""
