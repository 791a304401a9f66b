#!/usr/bin/env python3
"""Re-derives, from an exported golf-server log alone, the commitment and the deal of hole 1
(docs/AUDIT.md), following the fair-shuffle protocol of RULES.md. Standard library only.

    python3 docs/audit_example.py golf-<id>.ndjson
"""
import hashlib
import json
import sys

entries = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
created, ended = entries[0]["data"], entries[-1]["data"]

# 1. The server seed revealed at the end must hash to the commitment published at creation.
seed = bytes.fromhex(ended["seed"])
commitment = hashlib.sha256(seed).hexdigest()
print("commitment", "OK" if commitment == created["commitment"] else "MISMATCH", commitment)

# 2. The effective seed: S = SHA-256(seed || c_0 || 0x00 || ... || c_{n-1} || 0x00).
joins = sorted((e["data"] for e in entries if e["type"] == "player_joined"), key=lambda d: d["seat"])
s = hashlib.sha256(seed + b"".join(j["client_seed"].encode("utf-8") + b"\0" for j in joins)).digest()
print("effective seed", s.hex())


def words(hole, shuffle):
    """The big-endian u64 words of SHA-256(S || "golf-shuffle" || u32be(h) || u32be(k) || u64be(i))."""
    i = 0
    while True:
        block = hashlib.sha256(
            s + b"golf-shuffle" + hole.to_bytes(4, "big") + shuffle.to_bytes(4, "big") + i.to_bytes(8, "big")
        ).digest()
        for offset in range(0, 32, 8):
            yield int.from_bytes(block[offset:offset + 8], "big")
        i += 1


def fisher_yates(cards, stream):
    """From the last element down, with rejection so that every j is equally likely."""
    for i in range(len(cards) - 1, 0, -1):
        bound = i + 1
        limit = 2**64 - (2**64 % bound)
        w = next(stream)
        while w >= limit:
            w = next(stream)
        j = w % bound
        cards[i], cards[j] = cards[j], cards[i]
    return cards


# 3. The deal of hole 1: shuffle 0 of hole 1 over the canonical deck AS 2S ... KS AH ... KC.
ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
deck = fisher_yates([rank + suit for suit in "SHDC" for rank in ranks], words(1, 0))
dealt = next(e["data"] for e in entries if e["type"] == "hole_dealt" and e["data"]["hole"] == 1)
if deck == dealt["deck"]:
    print("hole 1 deal OK", " ".join(deck))
elif created["stacked"]:
    print("hole 1 deal STACKED (an explicit deck, not the fair shuffle)")
else:
    print("hole 1 deal MISMATCH")
