#!/usr/bin/env python3
"""Independent audit of a finished game's log in the public format of docs/API.md ("The log").

Checks, with hashlib and RFC 8785 canonical JSON from the PyPI package `rfc8785` (pip install
rfc8785), what any third party can check once a game is finished: the revealed seed matches the
commitment published at creation, every salt is derived from the seed, and every hash chains.
Run: python3 tests/vectors/verify_log.py tests/vectors/log_*.ndjson
"""

import hashlib
import json
import sys

import rfc8785


def verify(path):
    entries = [json.loads(line) for line in open(path, encoding="utf-8")]
    seed = bytes.fromhex(entries[-1]["data"]["seed"])
    assert entries[-1]["type"] == "game_ended", "a finished game's log ends with game_ended"
    assert hashlib.sha256(seed).hexdigest() == entries[0]["data"]["commitment"], "commitment"
    head = bytes(32)
    for seq, entry in enumerate(entries, start=1):
        assert entry["seq"] == seq, f"seq {seq}"
        salt = hashlib.sha256(seed + b"golf-salt" + seq.to_bytes(8, "big")).digest()[:16]
        assert entry["salt"] == salt.hex(), f"salt of {seq}"
        unhashed = {key: value for key, value in entry.items() if key != "hash"}
        head = hashlib.sha256(head + rfc8785.dumps(unhashed)).digest()
        assert entry["hash"] == head.hex(), f"hash of {seq}"
    print(f"{path}: {len(entries)} entries, commitment, salts and hash chain verify")


for path in sys.argv[1:]:
    verify(path)
