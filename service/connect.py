"""Where the service's Neo4j is: NEO4J_URI if set, else the managed local one."""
from __future__ import annotations

from .config import Settings
from .events import EventBus
from .errors import Unavailable
from .neo4j_local import detached_status
from .store import Database, Ledger, Limits, open_driver


def neo4j_uri(settings: Settings) -> str:
    if settings.neo4j_uri:
        return settings.neo4j_uri
    state = detached_status(settings.local_neo4j_home)
    if state is None:
        raise Unavailable("the managed local Neo4j is not running: start it with "
                          "`ctxdag neo4j up`, or point NEO4J_URI at an existing Neo4j 5.x")
    return state["uri"]


async def open_database(settings: Settings) -> Database:
    """One driver for the process; the schema is applied before anything else runs."""
    password = settings.neo4j_password if settings.neo4j_uri else ""
    driver = open_driver(neo4j_uri(settings), settings.neo4j_user, password)
    database = Database(driver, database=settings.neo4j_database)
    try:
        await database.apply_schema()
    except BaseException:
        await driver.close()
        raise
    return database


def ledger_for(database: Database, settings: Settings, events: EventBus | None = None,
               tenant: str | None = None) -> Ledger:
    limits = Limits(settings.max_content_bytes, settings.max_metadata_bytes,
                    settings.max_call_reads)
    return Ledger.open(database, tenant or settings.tenant, limits, events)
