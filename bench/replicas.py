"""Workload 11: the service scaled out — 1, 2 and 3 `ctxdag serve` processes on the bench's
Neo4j, driven over HTTP in the same run, and what the event feed costs and delays.

Three replicas are started as real processes (`python -m service.cli serve`, as
tests/service_process.py starts them) on the bench's managed Neo4j, all with the bench's
tenant and the same bearer token (CTXDAG_API_TOKENS), the offline provider. A
configuration with N replicas sends its load to the first N; the others receive nothing
and, with no subscriber, do nothing (each row's `cores` shows their CPU). After each start
all three are driven unmeasured for a while, longer the first time. With `--only 11`
the store starts nearly empty, and Neo4j discards and replans its statements whenever the
counts they were planned for change by more than it tolerates: in the first minutes a
turn cost Neo4j 2–3× the CPU it cost later. So 200 sessions of 200 messages are bulk
loaded first, and each row counts the replans ("Discarded stale query" in Neo4j's
debug.log) that happened during its runs.

- **Throughput.** 8 clients, each with its own keep-alive `httpx.AsyncClient` per replica,
  send `sendMessage` turns back to back for a fixed time: each client on its own session
  ("8 sessions") or all eight on one ("1 session"); client i through replica i mod N, or
  (the "rotated" row) its k-th turn through replica (i + k) mod N, as a balancer without
  affinity would. Every configuration gets fresh sessions of `HISTORY` messages (bulk
  loaded) and 3 unmeasured turns per client first. The configurations run in rounds, the
  list and then the list reversed, so drifting load hits them alike; a row pools its
  rounds (turns / seconds, latencies of all turns) and names each round's rate. The
  ratio to 1 replica divides pooled turns/s.
- **The event feed's cost.** The 3-replica configurations again with one subscriber per
  replica on every busy session (`sessionEvents(sessionId, after)`, one websocket each:
  24 for 8 sessions, 3 for one), with the default poll of 0.2 s, then with the replicas
  restarted with CTXDAG_EVENT_POLL_SECONDS=0.05 (where the runs without subscribers are
  repeated as the control). Every subscriber must receive every event of its session, in
  order, without a gap; the row says how many arrived. Then the subscriptions alone: 24
  listening and no writes, the replicas' and Neo4j's CPU above the same interval with
  nobody subscribed; and the poll statement (`events_after` of 8 sessions) timed from the
  bench between floor blocks.
- **Delivery delay.** One session, its writer on replica B, a subscriber on each of A, B
  and C: a turn, a wait until its reply's NODE_APPENDED has reached all three, then a
  random pause of up to one poll interval (so turns land at every phase of C's poll). The
  delay runs from the `sendMessage` response to the event's arrival, both read with
  `time.perf_counter` in this process (negative: the event came first). The same delays
  are taken from every turn of the subscribed throughput runs, local (the subscriber on
  the writer's replica) and remote.

CPU comes from /proc (user + system ticks) for every replica, the Neo4j JVM and this
process (the load generator and the subscribers' client side), and for the whole machine:
what the machine spent beyond those is "other", someone else's work on the same cores.
The replicas' own driver retries ("will be retried" in their output) are counted by
Neo4j error code; a retry costs about a second of backoff.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NamedTuple

import httpx
import websockets

from service.neo4j_local import free_port
from service.store.events import events_after

from .content import user_text
from .core import Bench
from .timing import Stats

S11 = "11 replicas"

CLIENTS = 8
HISTORY = 100  # messages in each session before it is driven
WARMUP_TURNS = 3  # per client, unmeasured
DEFAULT_POLL = 0.2
FAST_POLL = 0.05
SETTLE_S = 10.0  # how long subscribers may take to catch up after a run
RETRY = "will be retried"  # the driver's log line when it retries a transaction


@dataclass(frozen=True)
class ReplicaSizes:
    seconds: float = 3.0  # per configuration per round
    rounds: int = 4
    delay_turns: int = 50
    idle_seconds: float = 8.0
    poll_samples: int = 200
    warmup_seconds: float = 3.0  # all three replicas driven, unmeasured, after each start
    first_warmup_seconds: float = 15.0  # the same before the first phase: Neo4j may be cold
    ballast_sessions: int = 200  # bulk-loaded first, so the store's statistics hold still
    ballast_messages: int = 200


FULL = ReplicaSizes()
QUICK = ReplicaSizes(seconds=2.0, rounds=1, delay_turns=12, idle_seconds=2.0, poll_samples=50,
                     warmup_seconds=1.0, first_warmup_seconds=2.0, ballast_sessions=20)

SEND = """mutation($s: ID!, $c: String!) {
  sendMessage(sessionId: $s, content: $c) { reply { id } errorCode error } }"""
EVENTS = """subscription($s: ID!, $a: Int) { sessionEvents(sessionId: $s, after: $a) {
  seq type ... on NodeAppended { nodeId } } }"""

CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- processes and CPU ----------------------------------------------------------------

class Replica:
    """One `ctxdag serve` process on a free loopback port."""

    def __init__(self, name: str, env: dict[str, str]) -> None:
        self.name, self.env = name, env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[str] | None = None
        self.log = Path(tempfile.mkstemp(prefix=f"ctxdag-bench-{name}-", suffix=".log")[1])

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self, timeout: float = 120) -> None:
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port)],
                env=self.env, stdout=log, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=10) as http:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"replica {self.name} exited: "
                                       f"{self.log.read_text(errors='replace')[-2000:]}")
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{self.url}/healthz")).status_code == 200:
                        return
                await asyncio.sleep(0.2)
        raise RuntimeError(f"replica {self.name} did not become healthy in {timeout:.0f} s")

    async def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            await asyncio.to_thread(process.wait, 60)
        except subprocess.TimeoutExpired:
            process.kill()
            await asyncio.to_thread(process.wait, 30)

    def remove_log(self) -> None:
        self.log.unlink(missing_ok=True)

    def lines(self, text: str) -> list[str]:
        """Lines of its output so far that contain `text` (driver retries, warnings)."""
        try:
            return [line for line in self.log.read_text(errors="replace").splitlines()
                    if text in line]
        except FileNotFoundError:
            return []


def process_cpu(pid: int | None) -> float:
    """User + system CPU seconds of a process (all its threads) so far."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_busy() -> float:
    """CPU seconds the whole machine spent outside idle and iowait, over all cores."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(values[:8]) - values[3] - values[4]) / CLK_TCK


def neo4j_pid(home: Path) -> int | None:
    """The bench's Neo4j JVM: the java process whose command line names its home."""
    marker = str(home)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "java" in cmdline and marker in cmdline:
            return int(entry.name)
    return None


@dataclass(frozen=True)
class CpuMark:
    at: float
    replicas: tuple[float, ...]
    neo4j: float
    bench: float
    machine: float


class Cpu:
    def __init__(self, replicas: list[Replica], neo_pid: int | None) -> None:
        self.replicas, self.neo_pid = replicas, neo_pid

    def mark(self) -> CpuMark:
        return CpuMark(time.perf_counter(), tuple(process_cpu(r.pid) for r in self.replicas),
                       process_cpu(self.neo_pid), process_cpu(os.getpid()), machine_busy())

    @staticmethod
    def cores(a: CpuMark, b: CpuMark) -> dict[str, Any]:
        """Cores used between two marks, by process."""
        dt = b.at - a.at
        replicas = [round((y - x) / dt, 3) for x, y in zip(a.replicas, b.replicas)]
        neo4j = round((b.neo4j - a.neo4j) / dt, 3)
        bench = round((b.bench - a.bench) / dt, 3)
        machine = round((b.machine - a.machine) / dt, 3)
        return {"seconds": round(dt, 2), "replicas": replicas,
                "replicas_total": round(sum(replicas), 3), "neo4j": neo4j,
                "load_generator": bench, "machine": machine,
                "other": round(max(0.0, machine - sum(replicas) - neo4j - bench), 3)}


def cpu_note(cores: dict[str, Any]) -> str:
    each = " + ".join(f"{c:.2f}" for c in cores["replicas"])
    return (f"cores busy: replicas {cores['replicas_total']:.2f} ({each}), Neo4j "
            f"{cores['neo4j']:.2f}, load generator {cores['load_generator']:.2f}, other "
            f"processes {cores['other']:.2f}, machine {cores['machine']:.2f} of {os.cpu_count()}")


# --- subscribers ----------------------------------------------------------------------

class Listener:
    """One websocket subscribed to one session's events through one replica; records the
    arrival of every NODE_APPENDED by node id, and checks the sequence has no gap."""

    def __init__(self, replica_index: int, replica: Replica, session_id: str, after: int,
                 headers: dict[str, str]) -> None:
        self.replica_index, self.replica, self.session_id = replica_index, replica, session_id
        self.after, self.headers = after, headers
        self.last = after
        self.received = 0
        self.out_of_order = 0
        self.errors: list[str] = []
        self.arrivals: dict[str, float] = {}
        self.connected = asyncio.Event()
        self.task: asyncio.Task | None = None

    def start(self) -> "Listener":
        self.task = asyncio.create_task(self._run())
        return self

    async def _run(self) -> None:
        url = self.replica.url.replace("http://", "ws://") + "/graphql"
        try:
            async with websockets.connect(url, subprotocols=["graphql-transport-ws"],
                                          additional_headers=self.headers,
                                          open_timeout=20) as ws:
                await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
                ack = json.loads(await ws.recv())
                if ack.get("type") != "connection_ack":
                    raise RuntimeError(f"no connection_ack: {ack}")
                await ws.send(json.dumps({"id": "events", "type": "subscribe", "payload": {
                    "query": EVENTS, "variables": {"s": self.session_id, "a": self.after}}}))
                self.connected.set()
                async for raw in ws:
                    now = time.perf_counter()
                    message = json.loads(raw)
                    if message.get("type") != "next":
                        self.errors.append(str(message)[:300])
                        return
                    payload = message["payload"]
                    if payload.get("errors"):
                        self.errors.append(str(payload["errors"])[:300])
                        continue
                    event = payload["data"]["sessionEvents"]
                    if event["seq"] != self.last + 1:
                        self.out_of_order += 1
                    self.last = max(self.last, event["seq"])
                    self.received += 1
                    if event["type"] == "NODE_APPENDED":
                        self.arrivals[event["nodeId"]] = now
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - reported with the row
            self.errors.append(f"{type(e).__name__}: {e}"[:300])
        finally:
            self.connected.set()

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


async def last_seq(b: Bench, session_id: str) -> int:
    return (await b.ledger.events.bounds(session_id)).last_seq


async def caught_up(b: Bench, listeners: list[Listener], timeout: float = SETTLE_S) -> bool:
    """Waits until every listener has its session's newest event (False: it timed out)."""
    finals = {s: await last_seq(b, s) for s in {li.session_id for li in listeners}}
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if all(li.last >= finals[li.session_id] or li.errors for li in listeners):
            return not any(li.errors for li in listeners)
        await asyncio.sleep(0.02)
    return False


async def subscribe(b: Bench, replicas: list[Replica], sessions: list[str],
                    headers: dict[str, str]) -> list[Listener]:
    listeners = []
    for session_id in sessions:
        after = await last_seq(b, session_id)
        for i, replica in enumerate(replicas):
            listeners.append(Listener(i, replica, session_id, after, headers).start())
    await asyncio.gather(*(li.connected.wait() for li in listeners))
    failed = [e for li in listeners for e in li.errors]
    if failed:
        raise RuntimeError(f"subscribing failed: {failed[:3]}")
    return listeners


def delivery(listeners: list[Listener]) -> dict[str, Any]:
    return {"subscribers": len(listeners),
            "events_received": sum(li.received for li in listeners),
            "out_of_order": sum(li.out_of_order for li in listeners),
            "errors": [e for li in listeners for e in li.errors][:5]}


# --- the load -------------------------------------------------------------------------

@dataclass(frozen=True)
class TurnRecord:
    replica: int
    session_id: str
    reply_id: str
    returned: float
    latency: float


@dataclass
class Run:
    """One configuration's measured run."""

    label: str
    replicas: int
    turns: list[TurnRecord]
    seconds: float
    failures: dict[str, int]
    cores: dict[str, Any]
    delivery: dict[str, Any] | None = None
    caught_up: bool | None = None
    retries: int = 0  # "will be retried" lines the replicas logged during the run
    retry_lines: list[str] = field(default_factory=list)  # the first few of them
    retry_causes: dict[str, int] = field(default_factory=dict)  # by Neo4j error code
    replans: int = 0  # statements Neo4j discarded from its plan cache as stale meanwhile

    @property
    def rate(self) -> float:
        return len(self.turns) / self.seconds


def replans(b: Bench) -> int:
    """Plans Neo4j has discarded as stale so far (its debug.log says so each time): on a
    store whose counts change a lot it replans its statements, at some CPU cost."""
    try:
        return (b.neo.home / "logs" / "debug.log").read_text(errors="replace").count(
            "Discarded stale query")
    except FileNotFoundError:
        return 0


@dataclass
class Driver:
    b: Bench
    headers: dict[str, str]
    cpu: Cpu
    counter: int = 300_000  # fresh user texts, apart from the other workloads'

    async def sessions(self, label: str, count: int) -> list[str]:
        return [(await self.b.loader.chain(f"bench replicas {label} {i}", HISTORY)).session_id
                for i in range(count)]

    async def turn(self, http: httpx.AsyncClient, session_id: str,
                   failures: dict[str, int]) -> str | None:
        self.counter += 1
        response = await http.post("/graphql", json={
            "query": SEND, "variables": {"s": session_id, "c": user_text(self.counter)}})
        body = response.json() if response.headers.get("content-type", "").startswith(
            "application/json") else {}
        if response.status_code != 200 or body.get("errors"):
            errors = body.get("errors") or [{"message": response.text[:200]}]
            key = (f"{errors[0].get('extensions', {}).get('code', response.status_code)}: "
                   f"{errors[0].get('message', '')}")[:160]
            failures[key] = failures.get(key, 0) + 1
            return None
        turn = body["data"]["sendMessage"]
        if turn["reply"] is None:
            key = f"{turn['errorCode']}: {turn['error']}"[:160]
            failures[key] = failures.get(key, 0) + 1
            return None
        return turn["reply"]["id"]

    async def drive(self, label: str, replicas: list[Replica], sessions: list[str],
                    seconds: float, listeners: list[Listener] | None = None,
                    rotate: bool = False) -> Run:
        """CLIENTS clients, client i on session i mod len(sessions), back-to-back turns for
        `seconds` after WARMUP_TURNS each. Client i sends every turn through replica i mod N
        or, with `rotate`, its k-th turn through replica (i + k) mod N, as a balancer
        without affinity would. Each client keeps one keep-alive connection per replica."""
        n = len(replicas)
        clients = [[httpx.AsyncClient(base_url=r.url, headers=self.headers, timeout=60)
                    for r in replicas] for _ in range(CLIENTS)]
        failures: dict[str, int] = {}
        turns: list[TurnRecord] = []
        try:
            async def warm(i: int) -> None:
                for k in range(WARMUP_TURNS):
                    await self.turn(clients[i][(i + k) % n if rotate else i % n],
                                    sessions[i % len(sessions)], failures)

            await asyncio.gather(*(warm(i) for i in range(CLIENTS)))
            if listeners:
                await caught_up(self.b, listeners)
            failures.clear()
            retries_before = [len(r.lines(RETRY)) for r in replicas]
            replans_before = replans(self.b)
            start_mark = self.cpu.mark()
            deadline = start_mark.at + seconds

            async def client(i: int) -> None:
                session_id = sessions[i % len(sessions)]
                k = WARMUP_TURNS
                while time.perf_counter() < deadline:
                    r = (i + k) % n if rotate else i % n
                    k += 1
                    t0 = time.perf_counter()
                    reply_id = await self.turn(clients[i][r], session_id, failures)
                    t1 = time.perf_counter()
                    if reply_id is not None:
                        turns.append(TurnRecord(r, session_id, reply_id, t1, t1 - t0))

            async with asyncio.TaskGroup() as group:
                for i in range(CLIENTS):
                    group.create_task(client(i))
            end_mark = self.cpu.mark()
        finally:
            await asyncio.gather(*(c.aclose() for row in clients for c in row))
        retried = [line for r, skip in zip(replicas, retries_before)
                   for line in r.lines(RETRY)[skip:]]
        causes: dict[str, int] = {}
        for line in retried:
            found = re.search(r"neo4j_code: ([\w.]+)", line)
            cause = found.group(1) if found else "other"
            causes[cause] = causes.get(cause, 0) + 1
        run = Run(label, n, turns, end_mark.at - start_mark.at, failures,
                  Cpu.cores(start_mark, end_mark), retries=len(retried), retry_causes=causes,
                  retry_lines=[line[:400] for line in retried[:5]],
                  replans=replans(self.b) - replans_before)
        if listeners:
            run.caught_up = await caught_up(self.b, listeners)
            run.delivery = delivery(listeners)
        for session_id in sessions:
            violations = await self.b.ledger.violations(session_id)
            if violations:
                raise RuntimeError(f"{label}: {session_id} unsound: {violations[:3]}")
        return run


def delays(turns: Iterable[TurnRecord], listeners: list[Listener]) -> dict[str, list[float]]:
    """Seconds from each turn's response to its reply's NODE_APPENDED at each subscriber of
    its session, split by whether the subscriber is on the writer's replica."""
    by_session: dict[str, list[Listener]] = {}
    for li in listeners:
        by_session.setdefault(li.session_id, []).append(li)
    out: dict[str, list[float]] = {"local": [], "remote": [], "missing": []}
    for t in turns:
        for li in by_session.get(t.session_id, ()):
            arrived = li.arrivals.get(t.reply_id)
            if arrived is None:
                out["missing"].append(0.0)
            else:
                out["local" if li.replica_index == t.replica else "remote"].append(
                    arrived - t.returned)
    return out


# --- the workload ---------------------------------------------------------------------

MODES = {"8 sessions": CLIENTS, "1 session": 1}


class Config(NamedTuple):
    mode: str  # a key of MODES
    replicas: int
    subscribed: bool = False  # one subscriber per replica on each session
    rotate: bool = False  # each client's turns go round the replicas (no affinity)

    @property
    def label(self) -> str:
        return (f"{self.mode}, {self.replicas} replicas"
                + (" + subscribers" if self.subscribed else "")
                + (", turns rotated over the replicas" if self.rotate else ""))


@dataclass
class Pooled:
    runs: list[Run] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return sum(len(r.turns) for r in self.runs) / sum(r.seconds for r in self.runs)

    @property
    def stats(self) -> Stats:
        return Stats.of([t.latency for r in self.runs for t in r.turns])

    @property
    def failures(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.runs:
            for k, v in r.failures.items():
                out[k] = out.get(k, 0) + v
        return out

    def cores(self) -> dict[str, Any]:
        """Cores used, weighted by each run's length."""
        total = sum(r.seconds for r in self.runs)
        def avg(key: str) -> float:
            return round(sum(r.cores[key] * r.seconds for r in self.runs) / total, 3)
        width = len(self.runs[0].cores["replicas"])
        return {"replicas": [round(sum(r.cores["replicas"][i] * r.seconds for r in self.runs)
                                   / total, 3) for i in range(width)],
                **{k: avg(k) for k in ("replicas_total", "neo4j", "load_generator",
                                       "machine", "other")}}


async def rounds(d: Driver, replicas: list[Replica], configs: list[Config],
                 count: int, seconds: float, tag: str
                 ) -> tuple[dict[Config, Pooled], dict[str, list[float]]]:
    """Each config once per round, the order reversed every other round. Returns the pooled
    runs by config and, from the subscribed runs, the delivery delays by mode."""
    pooled: dict[Config, Pooled] = {c: Pooled() for c in configs}
    delay: dict[str, list[float]] = {}
    for r in range(count):
        order = configs if r % 2 == 0 else configs[::-1]
        for config in order:
            mode, n = config.mode, config.replicas
            label = f"{tag} {config.label}"
            sessions = await d.sessions(f"{label} round {r}", MODES[mode])
            listeners = (await subscribe(d.b, replicas[:n], sessions, d.headers)
                         if config.subscribed else [])
            try:
                run = await d.drive(label, replicas[:n], sessions, seconds, listeners,
                                    rotate=config.rotate)
                if config.subscribed:
                    for kind, values in delays(run.turns, listeners).items():
                        delay.setdefault(f"{mode} {kind}", []).extend(values)
            finally:
                for li in listeners:
                    await li.stop()
            pooled[config].runs.append(run)
            d.b.log(f"{S11}: {label}: {run.rate:.1f} turns/s, p50 "
                    f"{Stats.of([t.latency for t in run.turns]).p50_ms:.1f} ms; "
                    f"{cpu_note(run.cores)}; replans {run.replans}, retries {run.retries}")
    return pooled, delay


def run_note(p: Pooled) -> str:
    rates = " / ".join(f"{r.rate:.0f}" for r in p.runs)
    failed = sum(p.failures.values())
    retries = sum(r.retries for r in p.runs)
    causes: dict[str, int] = {}
    for r in p.runs:
        for cause, count in r.retry_causes.items():
            causes[cause] = causes.get(cause, 0) + count
    cores = p.cores()
    text = (f"{len(p.runs)} run{'s' if len(p.runs) > 1 else ''} of "
            f"{p.runs[0].seconds:.0f} s ({rates} turns/s); CPU per turn: replicas "
            f"{1000 * cores['replicas_total'] / p.rate:.1f} ms, Neo4j "
            f"{1000 * cores['neo4j'] / p.rate:.1f} ms, load generator "
            f"{1000 * cores['load_generator'] / p.rate:.1f} ms; {cpu_note(cores)}")
    replanned = sum(r.replans for r in p.runs)
    if replanned:
        text += f"; Neo4j replanned {replanned} stale statements meanwhile"
    if retries:
        text += (f"; the replicas' driver retried {retries} transactions ("
                 + ", ".join(f"{n}× {cause}" for cause, n in causes.items()) + ")")
    if failed:
        text += f"; {failed} turns FAILED: " + "; ".join(
            f"{n}× {why}" for why, n in p.failures.items())
    return text


def add_throughput(b: Bench, p: Pooled, case: str, base: Stats, reference: Pooled | None,
                   reference_name: str, poll: float | None) -> float | None:
    ratio = p.rate / reference.rate if reference is not None else None
    delivered = [r.delivery for r in p.runs if r.delivery]
    note = (f"{ratio:.2f}× the turns/s of {reference_name}; " if ratio is not None else "")
    note += run_note(p)
    failed = sum(p.failures.values())
    target = "every turn answered" if failed else ""
    met = False if failed else None
    if delivered:
        subscribers = delivered[0]["subscribers"]
        received = sum(x["events_received"] for x in delivered)
        out_of_order = sum(x["out_of_order"] for x in delivered)
        complete = all(r.caught_up for r in p.runs)
        note += (f"; {subscribers} subscribers received {received:,} events"
                 f"{', all of them in order' if complete and not out_of_order else ''}"
                 + ("" if complete else ", NOT ALL (some missing after 10 s)")
                 + (f", {out_of_order} out of order" if out_of_order else ""))
        target = ", ".join(filter(None, (target, "every event delivered in order")))
        met = bool(met is not False and complete and not out_of_order)
    b.add(S11, case, p.stats, base, value=round(p.rate, 1), unit="turns/s",
          target=target, met=met,
          note=note, ratio_to_reference=round(ratio, 3) if ratio is not None else None,
          reference=reference_name, poll_seconds=poll, cores=p.cores(),
          cpu_ms_per_turn={k: round(1000 * p.cores()[k] / p.rate, 2)
                           for k in ("replicas_total", "neo4j", "load_generator")},
          runs=[{"turns/s": round(r.rate, 2), "turns": len(r.turns),
                 "seconds": round(r.seconds, 2), "failures": r.failures, "cores": r.cores,
                 "driver_retries": r.retries, "retry_causes": r.retry_causes,
                 "neo4j_replans": r.replans,
                 "retry_lines": r.retry_lines,
                 "delivery": r.delivery, "caught_up": r.caught_up} for r in p.runs],
          failed_turns=p.failures)
    return ratio


def add_delay(b: Bench, case: str, values: list[float], missing: int, note: str,
              **extra: Any) -> None:
    if not values:
        b.add(S11, case, None, None, status="failed", note=f"no delays measured; {note}")
        return
    stats = Stats.of(values)
    if missing:
        note += f"; {missing} events NEVER ARRIVED"
    b.add(S11, case, stats, None, note=note, target="every event delivered" if missing else "",
          met=False if missing else None, missing=missing, **extra)


async def light_delay(d: Driver, replicas: list[Replica], poll: float, turns: int) -> None:
    """A writer on B, subscribers on A, B and C, one turn at a time."""
    (session_id,) = await d.sessions(f"delay poll {poll}", 1)
    listeners = await subscribe(d.b, replicas, [session_id], d.headers)
    rng = random.Random(11)
    failures: dict[str, int] = {}
    by_listener: dict[int, list[float]] = {0: [], 1: [], 2: []}
    missing = 0
    try:
        async with httpx.AsyncClient(base_url=replicas[1].url, headers=d.headers,
                                     timeout=60) as http:
            for _ in range(WARMUP_TURNS):
                await d.turn(http, session_id, failures)
            await caught_up(d.b, listeners)
            start_mark = d.cpu.mark()
            for _ in range(turns):
                await asyncio.sleep(rng.uniform(0, poll))
                reply_id = await d.turn(http, session_id, failures)
                returned = time.perf_counter()
                if reply_id is None:
                    continue
                deadline = returned + max(5.0, 20 * poll)
                while (time.perf_counter() < deadline
                       and not all(reply_id in li.arrivals for li in listeners)):
                    await asyncio.sleep(0.002)
                for li in listeners:
                    if reply_id in li.arrivals:
                        by_listener[li.replica_index].append(li.arrivals[reply_id] - returned)
                    else:
                        missing += 1
            end_mark = d.cpu.mark()
    finally:
        for li in listeners:
            await li.stop()
    cores = Cpu.cores(start_mark, end_mark)
    info = delivery(listeners)
    failed = sum(failures.values())
    common = (f"one session, one turn at a time through replica B, then a pause of up to "
              f"{poll:g} s; CTXDAG_EVENT_POLL_SECONDS={poll:g}"
              + (f"; {failed} turns FAILED: {failures}" if failed else ""))
    a_stats = Stats.of(by_listener[0]) if by_listener[0] else None
    add_delay(d.b, f"event delay, B's sendMessage → subscriber on C, poll {poll:g} s, one writer",
              by_listener[2], missing,
              common + (f"; on A (also remote) p50 {a_stats.p50_ms:.1f} ms, p95 "
                        f"{a_stats.p95_ms:.1f} ms" if a_stats else ""),
              poll_seconds=poll, on_a=a_stats.as_dict() if a_stats else None, cores=cores,
              delivery=info)
    add_delay(d.b, f"event delay, B's sendMessage → subscriber on B, poll {poll:g} s, one writer",
              by_listener[1], missing,
              common + "; the writer's own replica reads at once after its commit",
              poll_seconds=poll, cores=cores)
    d.b.log(f"{S11}: delay poll {poll}: remote p50 "
            f"{Stats.of(by_listener[2]).p50_ms if by_listener[2] else float('nan'):.1f} ms, "
            f"local p50 {Stats.of(by_listener[1]).p50_ms if by_listener[1] else float('nan'):.1f} ms")


async def idle_cost(d: Driver, replicas: list[Replica], poll: float, seconds: float,
                    baseline: dict[str, Any]) -> None:
    """24 subscriptions (8 sessions × 3 replicas) and no writes: what polling alone costs."""
    sessions = await d.sessions(f"idle poll {poll}", CLIENTS)
    listeners = await subscribe(d.b, replicas, sessions, d.headers)
    try:
        await asyncio.sleep(1.0)  # every subscription is registered and its replay read
        start_mark = d.cpu.mark()
        await asyncio.sleep(seconds)
        end_mark = d.cpu.mark()
    finally:
        for li in listeners:
            await li.stop()
    cores = Cpu.cores(start_mark, end_mark)
    per_replica_ms = [round(1000 * (c - b0), 1) for c, b0 in
                      zip(cores["replicas"], baseline["replicas"])]
    neo_ms = round(1000 * (cores["neo4j"] - baseline["neo4j"]), 1)
    polls = len(replicas) / poll
    d.b.add(S11, f"subscriptions alone: 24 listening (8 sessions × 3 replicas), no writes, "
                 f"poll {poll:g} s", None, None,
            value=round(sum(cores["replicas"]) * 1000, 1), unit="ms CPU/s (replicas)",
            note=f"{len(replicas)} replicas × one statement per {poll:g} s = {polls:.0f} polls/s; "
                 f"above the same {seconds:.0f} s with nobody subscribed, each replica spent "
                 f"{' / '.join(f'{x:.1f}' for x in per_replica_ms)} ms CPU per second and "
                 f"Neo4j {neo_ms:.1f} ms per second; {cpu_note(cores)}",
            poll_seconds=poll, cores=cores, baseline=baseline,
            replica_ms_per_s_over_baseline=per_replica_ms, neo4j_ms_per_s_over_baseline=neo_ms)
    d.b.log(f"{S11}: idle subscriptions, poll {poll}: replicas +{per_replica_ms} ms/s, "
            f"Neo4j +{neo_ms} ms/s")


async def poll_statement(d: Driver, samples: int) -> None:
    """The feed's one statement, for 8 sessions at their newest cursors, from the bench."""
    sessions = await d.sessions("poll statement", CLIENTS)
    cursors = {s: await last_seq(d.b, s) for s in sessions}

    async def poll() -> None:
        await events_after(d.b.db, cursors, 256)

    stats, base = await d.b.timed(f"{S11} events_after", poll, samples=samples, warmup=20)
    d.b.add(S11, "the poll statement (events_after, 8 sessions, nothing new)", stats, base,
            round_trips=1, note="what each replica with subscribers runs once per poll "
                                "interval, and at once after its own commits")


def replica_env(b: Bench, token: str, poll: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("CTXDAG_") or k.startswith("NEO4J_")
                   or k == "ANTHROPIC_API_KEY")}
    env.update({"NEO4J_URI": b.neo.uri, "NEO4J_USER": "neo4j", "NEO4J_PASSWORD": "",
                "CTXDAG_TENANT": b.tenant, "CTXDAG_API_TOKENS": f"{token}={b.tenant}",
                "CTXDAG_EVENT_POLL_SECONDS": str(poll)})
    return env


@contextlib.asynccontextmanager
async def started(b: Bench, token: str, poll: float):
    replicas = [Replica(name, replica_env(b, token, poll)) for name in ("A", "B", "C")]
    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(r.start() for r in replicas))
        b.log(f"{S11}: 3 replicas up in {time.perf_counter() - t0:.1f} s "
              f"(poll {poll:g} s): {', '.join(r.url for r in replicas)}")
        yield replicas
    finally:
        await asyncio.gather(*(r.stop() for r in replicas), return_exceptions=True)
        for r in replicas:
            r.remove_log()


async def warm_up(d: Driver, replicas: list[Replica], seconds: float) -> None:
    """Every replica and Neo4j warmed on the statements the runs make (JIT, plans, pools)."""
    for mode, sessions in MODES.items():
        await d.drive(f"warm-up {mode}", replicas, await d.sessions(f"warm-up {mode}", sessions),
                      seconds)


async def idle_baseline(cpu: Cpu, seconds: float) -> dict[str, Any]:
    start_mark = cpu.mark()
    await asyncio.sleep(seconds)
    return Cpu.cores(start_mark, cpu.mark())


async def replicas(b: Bench) -> None:
    sizes = QUICK if b.quick else FULL
    token = f"bench-{uuid.uuid4().hex}"
    headers = {"Authorization": f"Bearer {token}"}
    neo_pid = neo4j_pid(b.neo.home)
    b.facts["replicas_machine"] = {"nproc": os.cpu_count(), "neo4j_pid_found": neo_pid is not None}
    scaling = [Config(mode, n) for mode in MODES for n in (1, 2, 3)]
    rotated = [Config("8 sessions", 3, rotate=True)]
    subscribed = [Config(mode, 3, subscribed=True) for mode in MODES]

    t0 = time.perf_counter()
    for i in range(sizes.ballast_sessions):
        await b.loader.chain(f"bench replicas ballast {i}", sizes.ballast_messages)
    b.log(f"{S11}: ballast of {sizes.ballast_sessions} sessions × {sizes.ballast_messages} "
          f"messages loaded in {time.perf_counter() - t0:.1f} s")
    b.facts["replicas_ballast"] = {"sessions": sizes.ballast_sessions,
                                   "messages": sizes.ballast_messages}
    async with started(b, token, DEFAULT_POLL) as procs:
        d = Driver(b, headers, Cpu(procs, neo_pid))
        await warm_up(d, procs, sizes.first_warmup_seconds)
        base = await b.floor(f"{S11} poll {DEFAULT_POLL}")
        pooled, load_delay = await rounds(d, procs, scaling + rotated + subscribed, sizes.rounds,
                                          sizes.seconds, f"poll {DEFAULT_POLL:g}:")
        for mode in MODES:
            one = pooled[Config(mode, 1)]
            for n in (1, 2, 3):
                add_throughput(b, pooled[Config(mode, n)],
                               f"sendMessage over HTTP, {CLIENTS} clients on {mode}, "
                               f"{n} replica{'s' if n > 1 else ''}", base, one,
                               "1 replica", None)
        for mode in MODES:
            add_throughput(b, pooled[Config(mode, 3, subscribed=True)],
                           f"sendMessage over HTTP, {CLIENTS} clients on {mode}, 3 replicas "
                           f"+ a subscriber per replica on each session, poll "
                           f"{DEFAULT_POLL:g} s", base, pooled[Config(mode, 3)],
                           "3 replicas without subscribers", DEFAULT_POLL)
        add_throughput(b, pooled[rotated[0]],
                       f"sendMessage over HTTP, {CLIENTS} clients on 8 sessions, 3 replicas, "
                       "each client's turns rotated over the replicas (no affinity)", base,
                       pooled[Config("8 sessions", 3)], "3 replicas with affinity", None)
        add_load_delays(b, load_delay, DEFAULT_POLL)
        baseline = await idle_baseline(d.cpu, sizes.idle_seconds)
        await idle_cost(d, procs, DEFAULT_POLL, sizes.idle_seconds, baseline)
        await poll_statement(d, sizes.poll_samples)
        await light_delay(d, procs, DEFAULT_POLL, sizes.delay_turns)

    async with started(b, token, FAST_POLL) as procs:
        d = Driver(b, headers, Cpu(procs, neo_pid), counter=d.counter)
        await warm_up(d, procs, sizes.warmup_seconds)
        base = await b.floor(f"{S11} poll {FAST_POLL}")
        configs = [c for mode in MODES
                   for c in (Config(mode, 3), Config(mode, 3, subscribed=True))]
        pooled, load_delay = await rounds(d, procs, configs, sizes.rounds, sizes.seconds,
                                          f"poll {FAST_POLL:g}:")
        for mode in MODES:
            add_throughput(b, pooled[Config(mode, 3)],
                           f"sendMessage over HTTP, {CLIENTS} clients on {mode}, 3 replicas "
                           f"(control for poll {FAST_POLL:g} s)", base, None, "", None)
            add_throughput(b, pooled[Config(mode, 3, subscribed=True)],
                           f"sendMessage over HTTP, {CLIENTS} clients on {mode}, 3 replicas "
                           f"+ a subscriber per replica on each session, poll "
                           f"{FAST_POLL:g} s", base, pooled[Config(mode, 3)],
                           "3 replicas without subscribers (same restart)", FAST_POLL)
        add_load_delays(b, load_delay, FAST_POLL)
        baseline = await idle_baseline(d.cpu, sizes.idle_seconds)
        await idle_cost(d, procs, FAST_POLL, sizes.idle_seconds, baseline)
        await light_delay(d, procs, FAST_POLL, sizes.delay_turns)


def add_load_delays(b: Bench, load_delay: dict[str, list[float]], poll: float) -> None:
    for mode in MODES:
        missing = len(load_delay.get(f"{mode} missing", []))
        for kind, where in (("remote", "a subscriber on another replica"),
                            ("local", "the subscriber on the writer's replica")):
            add_delay(b, f"event delay under load ({CLIENTS} clients on {mode}, 3 replicas), "
                         f"→ {where}, poll {poll:g} s",
                      load_delay.get(f"{mode} {kind}", []), missing if kind == "remote" else 0,
                      "from each measured turn's sendMessage response to its reply's "
                      "NODE_APPENDED at each subscriber of its session",
                      poll_seconds=poll)
