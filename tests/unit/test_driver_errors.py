"""Neo4j's refusals as ctxdag's errors (service/store/db.py translate_driver_errors): a
transaction over Neo4j's memory limit says which limit and what to raise."""
import pytest
from neo4j.exceptions import Neo4jError

from service.errors import Unavailable
from service.store.db import translate_driver_errors

OVER = ("The allocation of an extra 2.0 MiB would use more than the limit 716.8 MiB. "
        "Currently using 715.5 MiB. dbms.memory.transaction.total.max threshold reached")


async def test_a_transaction_over_neo4js_memory_limit_names_the_limit_and_the_setting():
    with pytest.raises(Unavailable) as raised:
        async with translate_driver_errors():
            raise Neo4jError._hydrate_neo4j(
                code="Neo.TransientError.General.MemoryPoolOutOfMemoryError", message=OVER)
    message = raised.value.message
    assert "dbms.memory.transaction.total.max" in message and "CTXDAG_NEO4J_HEAP" in message
    assert "Nothing was written" in message and "in time" not in message


async def test_another_transient_refusal_is_unavailable_as_before():
    with pytest.raises(Unavailable, match="could not complete the transaction in time"):
        async with translate_driver_errors():
            raise Neo4jError._hydrate_neo4j(
                code="Neo.TransientError.Transaction.DeadlockDetected", message="deadlock")


async def test_neo4j_out_of_memory_for_an_answer_says_so_not_in_time():
    """A row of an answer too large for Neo4j's network buffers (seen on a 1 GB heap)."""
    with pytest.raises(Unavailable) as raised:
        async with translate_driver_errors():
            raise Neo4jError._hydrate_neo4j(
                code="Neo.TransientError.General.OutOfMemoryError",
                message="failed to allocate 532676608 byte(s) of direct memory (used: "
                        "545259520, max: 1073741824)")
    message = raised.value.message
    assert message.startswith("Neo4j ran out of memory for this request (failed to allocate")
    assert "CTXDAG_NEO4J_HEAP" in message and "in time" not in message
