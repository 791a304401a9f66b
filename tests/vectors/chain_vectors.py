#!/usr/bin/env python3
"""Independent reference for the log's hash chain (docs/API.md, "The log").

Computes the salt and hash of a few fixed entries with RFC 8785 canonical JSON from the PyPI package
`rfc8785` (pip install rfc8785) and hashlib, and prints them as the Rust constants pasted into
tests/store_chain_vectors.rs. Run: python3 tests/vectors/chain_vectors.py
"""

import hashlib
import json

import rfc8785

SERVER_SEED = bytes(range(32))

# Entries as a rules engine would write them: nested data, non-ASCII strings, integers (up to
# 2^53 - 1), nulls, and keys whose UTF-16 order differs from their UTF-8 order.
EVENTS = [
    ("2026-05-01T12:00:00Z", "game_created", {
        "game_id": "6f1c1d8e-4a3b-4c2d-9e8f-0123456789ab",
        "format": "golf-log/1",
        "seats": 2,
        "holes": 9,
        "rules": {"flip_after_discard": "optional", "turn_cap": None, "jokers": 0},
        "commitment": "ab" * 32,
        "stacked": False,
    }),
    ("2026-05-01T12:00:01.250Z", "player_joined", {
        "seat": 0,
        "name": "Zoë ☃ 日本語 \U0001F600",
        "bot": None,
        "client_seed": "quote \" backslash \\ tab \t newline \n nul \u0000 del \u007f",
    }),
    ("2026-05-01T12:00:02+02:00", "hole_dealt", {
        "hole": 1,
        "dealer": 1,
        "discard": "10H",
        "deck": ["AS", "2C", "KD", "10H", None],
        "\uE000": "in UTF-16 an emoji key sorts before this private-use key, in code points after",
        "\U0001F600": "emoji key",
        "é": [-17, 0, 9007199254740991, {"deep": {"deeper": [[], {}]}}],
    }),
    ("2026-05-01T12:00:03Z", "game_ended", {"totals": [12, -3], "winners": [1], "seed": None}),
]


def salt(seed: bytes, seq: int) -> str:
    return hashlib.sha256(seed + b"golf-salt" + seq.to_bytes(8, "big")).digest()[:16].hex()


def rust_str(text: str) -> str:
    """A Rust string literal holding exactly `text`."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif code < 0x20 or code == 0x7F or code > 0x7E:
            out.append("\\u{%x}" % code)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def main() -> None:
    head = bytes(32)
    print(f"const SERVER_SEED_HEX: &str = {rust_str(SERVER_SEED.hex())};")
    print("const VECTORS: &[Vector] = &[")
    for seq, (at, kind, data) in enumerate(EVENTS, start=1):
        entry = {"seq": seq, "at": at, "type": kind, "data": data, "salt": salt(SERVER_SEED, seq)}
        canonical = rfc8785.dumps(entry)
        head = hashlib.sha256(head + canonical).digest()
        print("    Vector {")
        print(f"        seq: {seq},")
        print(f"        at: {rust_str(at)},")
        print(f"        kind: {rust_str(kind)},")
        # The data as an ordinary (non-canonical) JSON text: key order as written, spaces.
        print(f"        data: {rust_str(json.dumps(data, ensure_ascii=False))},")
        print(f"        jcs: {rust_str(canonical.decode('utf-8'))},")
        print(f"        salt: {rust_str(entry['salt'])},")
        print(f"        hash: {rust_str(head.hex())},")
        print("    },")
    print("];")


if __name__ == "__main__":
    main()
