"""An answer Neo4j drops mid-way while it answers other requests is told apart from an
outage (service/store/db.py): Neo4j encodes a row whole in its network buffers and closes
the connection when one outgrows them, which the driver reports as an unreachable server.
A proxy in front of the real Neo4j plays that part: it closes each connection once the
connection has carried CUT_AFTER bytes of answers."""
import asyncio
from urllib.parse import urlparse

import neo4j
import pytest

from service.errors import Unavailable
from service.store import Database
from service.store.queries import Query

CUT_AFTER = 1 << 20

# An answer of about `n` × 20 bytes: one row, as a long session's render was.
ANSWER = Query(name="answer_of_size", params=frozenset({"n"}), returns="one row", purpose="",
               text="RETURN [i IN range(1, $args.n) | 'item number ' + toString(i)] AS items")


class CuttingProxy:
    """127.0.0.1:port → Neo4j's Bolt address, each connection closed once it carried more
    than `cut_after` bytes from Neo4j."""

    def __init__(self, host: str, port: int, cut_after: int) -> None:
        self.target, self.cut_after = (host, port), cut_after
        self.server: asyncio.Server | None = None
        self.cut = 0  # connections closed mid-answer

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._connected, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _connected(self, client_in, client_out) -> None:
        neo4j_in, neo4j_out = await asyncio.open_connection(*self.target)

        async def pipe(source, sink, answers: bool) -> None:
            carried = 0
            try:
                while data := await source.read(1 << 16):
                    carried += len(data) if answers else 0
                    if carried > self.cut_after:
                        self.cut += 1
                        break
                    sink.write(data)
                    await sink.drain()
            except ConnectionError:
                pass
            finally:
                for writer in (client_out, neo4j_out):
                    writer.close()

        await asyncio.gather(pipe(client_in, neo4j_out, False),
                             pipe(neo4j_in, client_out, True))


@pytest.fixture
async def proxied(neo4j_server):
    bolt = urlparse(neo4j_server.uri)
    proxy = CuttingProxy(bolt.hostname, bolt.port, CUT_AFTER)
    port = await proxy.start()
    auth = neo4j.basic_auth(neo4j_server.user, neo4j_server.password) \
        if neo4j_server.password else None
    driver = neo4j.AsyncGraphDatabase.driver(
        f"bolt://127.0.0.1:{port}", auth=auth, connection_timeout=2.0,
        max_transaction_retry_time=0.5, notifications_min_severity="OFF")
    yield proxy, Database(driver, queries={ANSWER.name: ANSWER})
    await driver.close()


async def test_an_answer_dropped_while_neo4j_answers_others_says_so(proxied):
    proxy, db = proxied
    (row,) = await db.read("answer_of_size", n=100)  # a small answer passes
    assert len(row["items"]) == 100 and proxy.cut == 0
    with pytest.raises(Unavailable) as dropped:
        await db.read("answer_of_size", n=200_000)  # about 4 MB
    assert proxy.cut >= 1
    message = dropped.value.message
    assert message.startswith("Neo4j closed the connection while answering answer_of_size")
    assert "OutOfDirectMemoryError" in message and "CTXDAG_NEO4J_HEAP" in message
    assert "unreachable" not in message
    (row,) = await db.read("answer_of_size", n=100)  # and the next request is served
    assert len(row["items"]) == 100


async def test_an_outage_is_still_an_unreachable_neo4j(proxied):
    proxy, db = proxied
    await db.read("answer_of_size", n=100)
    await proxy.stop()  # no new connection: Neo4j is gone for this client
    with pytest.raises(Unavailable, match="Neo4j is unreachable"):
        await db.read("answer_of_size", n=200_000)
