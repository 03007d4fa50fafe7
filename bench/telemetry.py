"""Workload 3, telemetry: a turn with OpenTelemetry export on beside one with it off, in
the same run, sampled round robin. "On" is the real path: `telemetry.configure` with an
OTLP/HTTP exporter posting batches to a collector on loopback (a sink in this process
that answers 200), so span building, batching and the export thread's work all count."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from service import telemetry

from .content import user_text
from .core import Bench
from .timing import measure_round_robin
from .writes import S3


class _Sink(BaseHTTPRequestHandler):
    spans_posts = 0

    def do_POST(self) -> None:  # noqa: N802 - the handler's name is http.server's
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).spans_posts += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


async def send_with_export(b: Bench) -> None:
    turns = b.runtime.turns
    history = b.sizes.send_history
    sessions = {mode: (await b.loader.chain(f"bench export {mode}", history)).session_id
                for mode in ("off", "on")}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    counter = 0

    async def turn(mode: str) -> None:
        nonlocal counter
        counter += 1
        if mode == "on":
            telemetry.configure(endpoint)  # the same endpoint: the provider is kept
        else:
            telemetry.use(None)
        result = await turns.send_message(sessions[mode], user_text(200_000 + counter))
        if result.reply is None:
            raise RuntimeError(f"send_message produced no reply: {result.error}")

    try:
        stats, base = await measure_round_robin(
            b.driver, {mode: (lambda m=mode: turn(m)) for mode in ("off", "on")},
            samples=b.sizes.loop_samples * 2, warmup=5)
        telemetry.configure(endpoint)
        telemetry.flush()
    finally:
        telemetry.configure(None)
        server.shutdown()
    b.floors.append({"around": f"{S3} export on/off (round robin)", **base.as_dict()})
    b.add(S3, "Turns.send_message (offline provider), OpenTelemetry export off", stats["off"],
          base, note=f"sampled in turn with the row below; sessions start with {history} "
                     "messages")
    ratio = stats["on"].p50_ms / stats["off"].p50_ms
    b.add(S3, "Turns.send_message (offline provider), OpenTelemetry export on", stats["on"],
          base, note=f"{ratio:.2f}× the turn without export (p50); one chat span a turn, "
                     f"OTLP/HTTP batches to a loopback sink ({_Sink.spans_posts} posts)")
    b.log(f"{S3}: send_message export on p50 {stats['on'].p50_ms:.1f} ms, off "
          f"{stats['off'].p50_ms:.1f} ms")
