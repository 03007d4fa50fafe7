"""The fast tier (`make check`): every unit test, and one integration test per area.

One place names the integration tests, so an area's choice is easy to see and change.
`make check` fails when a name here no longer matches a test, so the tier cannot shrink
silently when a test is renamed.
"""
from __future__ import annotations

UNIT_DIR = "tests/unit/"

ONE_PER_AREA = (
    # the store: sessions, appends, moves, labels, schema
    "tests/integration/test_sessions.py::test_create_makes_root_with_system_prompt_and_head_on_root",
    "tests/integration/test_append.py::test_append_at_head_advances_head_and_links_predecessor",
    "tests/integration/test_moves.py::test_checkout_moves_head_to_any_live_node",
    "tests/integration/test_labels.py::test_a_label_is_set_replaced_and_removed_and_the_node_never_changes",
    "tests/integration/test_schema.py::test_apply_schema_is_idempotent_and_records_the_version",
    "tests/integration/test_check.py::test_corrupted_sessions_are_named_with_their_violations",
    # rendering and compaction, every strategy
    "tests/integration/test_render.py::test_the_summary_enters_the_prompt_in_place_of_its_segment",
    "tests/integration/test_compaction.py::test_compaction_writes_one_node_and_changes_nothing_else",
    "tests/integration/test_compaction_controls.py::test_a_preview_writes_nothing_and_the_real_run_writes_what_it_showed",
    "tests/integration/test_summary_strategies.py::test_on_one_linear_chain_both_strategies_render_alike",
    "tests/integration/test_nested_summaries.py::test_a_merge_writes_one_nested_summary_of_the_oldest_stand_ins",
    "tests/integration/test_pins.py::test_a_pinned_turn_renders_after_the_summary_and_calls_read_it",
    "tests/integration/test_cache_breaks.py::test_under_segmented_a_pin_breaks_after_its_own_segment",
    # turns, tools, provenance, the provider through its SDK
    "tests/integration/test_turns.py::test_send_message_appends_both_turns_and_records_what_the_model_read",
    "tests/integration/test_tool_pairs.py::test_a_tool_round_trip_is_stored_as_blocks_and_renders_as_valid_requests",
    "tests/integration/test_provenance.py::test_every_call_reads_exactly_the_prompt_the_provider_received",
    "tests/integration/test_agent_anthropic.py::test_a_tool_round_trip_through_the_sdk_sends_the_request_clients_get",
    "tests/integration/test_prompt_cache.py::test_each_turn_reads_the_previous_prefix_and_the_tokens_add_up",
    # the API and its guards
    "tests/integration/test_api.py::test_healthz_reports_neo4j",
    "tests/integration/test_bad_input.py::test_every_bad_input_is_a_coded_error_and_writes_nothing",
    "tests/integration/test_query_cost.py::test_a_query_whose_answer_may_be_too_large_is_refused_before_it_runs",
    "tests/integration/test_events.py::test_a_write_refused_stores_no_event_and_takes_no_number",
    "tests/integration/test_api_analysts.py::test_covered_by_names_every_summary_holding_a_node_and_the_active_one",
    # transcripts, backups, the command line
    "tests/integration/test_import_transcripts.py::test_claude_code_session",
    "tests/integration/test_import_in_parts.py::test_every_fixture_imported_in_parts_is_the_session_imported_at_once",
    "tests/integration/test_follow_growth.py::test_every_fixture_followed_in_parts_is_the_session_followed_whole",
    "tests/integration/test_api_import_transcript.py::test_import_extend_and_reimport_a_transcript",
    "tests/integration/test_backup.py::test_importing_an_existing_session_is_a_conflict_and_writes_nothing",
    "tests/integration/test_cli.py::test_errors_are_coded_and_readable",
    # telemetry (the Phoenix run stays in `make test`: it starts a server)
    "tests/integration/test_telemetry.py::test_a_turn_a_compaction_and_an_import_export_genai_spans",
    # the end-to-end rule of the spec's section 8
    "tests/integration/test_scenario_store.py::test_the_section_8_flow_on_the_store",
)


def is_fast(nodeid: str) -> bool:
    """Whether a collected test belongs to the tier (parametrized cases count as their test)."""
    return nodeid.startswith(UNIT_DIR) or nodeid.split("[", 1)[0] in ONE_PER_AREA


def missing(nodeids: list[str]) -> list[str]:
    """The names of ONE_PER_AREA that match no collected test."""
    collected = {nodeid.split("[", 1)[0] for nodeid in nodeids}
    return [name for name in ONE_PER_AREA if name not in collected]
