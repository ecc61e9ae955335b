#!/usr/bin/env python3
"""Write an event storm: thousands of memory files created, rewritten, renamed and deleted
within seconds, the way agents and editors write (plain writes, write-then-rename,
renames, deletes, whole folders removed), in waves.

    python3 bench/storm.py TOPIC_DIR FEATURE_DIR [WAVES] [PER_WAVE] [PAUSE]

TOPIC_DIR gets `w{wave}_{n}.md` files (a topic folder in the primary folder), FEATURE_DIR
`FEATURE_w{wave}_{n}.md` files (an additional folder). Prints `wave N` when each wave
starts and a last line `done: {counts}`. Used by the benchmark and by the event-storm
test (tests/e2e/test_lsp_hardening_storm.py).
"""

from __future__ import annotations

import os
import shutil
import sys
import time

COUNTS = dict.fromkeys(["created", "rewritten", "deleted", "renamed", "short-lived"], 0)


class Storm:
    """The writer: counts what it did, pauses briefly every 50 operations."""

    def __init__(self, topic: str, feature: str, pause: float) -> None:
        self.topic, self.feature, self.pause = topic, feature, pause
        self.done = 0
        self.counts = dict(COUNTS)

    def tick(self, kind: str) -> None:
        # A short pause every 50 operations, so the writer is not a busy loop itself.
        self.done += 1
        self.counts[kind] += 1
        if self.done % 50 == 0:
            time.sleep(self.pause)

    def write(self, path: str, text: str, kind: str = "created") -> None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        self.tick(kind)

    def replace(self, path: str, text: str) -> None:
        temporary = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
        self.tick("rewritten")

    def paths(self, wave: int, number: int) -> tuple[str, str]:
        return (
            os.path.join(self.topic, f"w{wave}_{number:04d}.md"),
            os.path.join(self.feature, f"FEATURE_w{wave}_{number:04d}.md"),
        )

    def wave(self, wave: int, per_wave: int) -> None:
        for number in range(per_wave):
            for path in self.paths(wave, number):
                self.write(path, f"# Wave {wave} note {number}\n\nSee [[storm/w0_0000]].\n")
        for number in range(0, per_wave, 2):
            for path in self.paths(wave, number):
                self.replace(path, f"---\ntags: [storm, w{wave}]\n---\n# Changed {number}\n")
        for number in range(0, per_wave, 3):
            for path in self.paths(wave, number):
                os.unlink(path)
                self.tick("deleted")
        for number in range(1, per_wave, 10):
            if number % 3 == 0:
                continue  # deleted above
            source = self.paths(wave, number)[0]
            os.rename(source, os.path.join(self.topic, f"r{wave}_{number:04d}.md"))
            self.tick("renamed")
        churn = os.path.join(self.topic, f"churn{wave}")
        os.makedirs(churn)
        for number in range(100):
            self.write(os.path.join(churn, f"c{number:03d}.md"), "short-lived\n", "short-lived")
        shutil.rmtree(churn)


def main(argv: list[str]) -> None:
    """Run the storm the arguments describe."""
    topic, feature = argv[0], argv[1]
    waves = int(argv[2]) if len(argv) > 2 else 3
    per_wave = int(argv[3]) if len(argv) > 3 else 700
    pause = float(argv[4]) if len(argv) > 4 else 0.01
    os.makedirs(topic, exist_ok=True)
    storm = Storm(topic, feature, pause)
    for wave in range(waves):
        print("wave", wave, flush=True)
        storm.wave(wave, per_wave)
    print(f"done: {storm.counts}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
