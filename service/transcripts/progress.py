"""The progress line of a long import, on a terminal only: files and entries done, the
rate, the time left (from the bytes left at the rate so far). Piped, it writes nothing."""
from __future__ import annotations

import time
from typing import Callable, TextIO

WIDTH = 24  # of the bar itself


class Progress:
    def __init__(self, stream: TextIO, files: int, size: int,
                 clock: Callable[[], float] = time.monotonic):
        self.stream, self.files, self.size, self.clock = stream, files, size, clock
        self.shown = _is_terminal(stream)
        self.started = clock()
        self.files_done = self.bytes_done = self.entries = 0

    def advance(self, size: int, entries: int) -> None:
        """One file more done, of `size` bytes holding `entries` lines."""
        self.files_done += 1
        self.bytes_done += size
        self.entries += entries
        self.draw()

    def draw(self) -> None:
        if self.shown:
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()

    def clear(self) -> None:
        """Takes the line away (before other output, and at the end)."""
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def line(self) -> str:
        share = self.bytes_done / self.size if self.size else 1.0
        filled = round(share * WIDTH)
        elapsed = max(self.clock() - self.started, 1e-6)
        rate = self.entries / elapsed
        left = (self.size - self.bytes_done) / (self.bytes_done / elapsed) \
            if self.bytes_done else None
        return (f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.files_done}/{self.files} "
                f"files, {self.entries:,} entries, {rate:,.0f} entries/s, "
                f"{_duration(left)} left")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
