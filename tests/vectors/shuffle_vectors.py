#!/usr/bin/env python3
"""Independent implementation of docs/RULES.md's fair-shuffle protocol (hashlib only).

Prints the expected values pasted into tests/shuffle_vectors.rs. Run: python3 shuffle_vectors.py
"""
import hashlib
import struct

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUITS = ["S", "H", "D", "C"]
CANONICAL = [r + s for s in SUITS for r in RANKS]


def effective_seed(server_seed: bytes, client_seeds: list[str]) -> bytes:
    data = server_seed + b"".join(c.encode("utf-8") + b"\x00" for c in client_seeds)
    return hashlib.sha256(data).digest()


def words(seed: bytes, hole: int, k: int):
    i = 0
    while True:
        block = hashlib.sha256(
            seed + b"golf-shuffle" + struct.pack(">I", hole) + struct.pack(">I", k) + struct.pack(">Q", i)
        ).digest()
        for off in range(0, 32, 8):
            yield struct.unpack(">Q", block[off : off + 8])[0]
        i += 1


def shuffle(cards: list[str], seed: bytes, hole: int, k: int) -> list[str]:
    cards = list(cards)
    stream = words(seed, hole, k)
    for i in range(len(cards) - 1, 0, -1):
        n = i + 1
        limit = 2**64 - (2**64 % n)
        while True:
            w = next(stream)
            if w < limit:
                break
        j = w % n
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def rust_list(name: str, codes: list[str]) -> str:
    body = ", ".join(f'"{c}"' for c in codes)
    return f"const {name}: [&str; {len(codes)}] = [{body}];"


server_seed = bytes(range(32))
clients = ["alice", "", "Zoë 🎲", ""]
s = effective_seed(server_seed, clients)
s_empty = effective_seed(server_seed, ["", ""])
reshuffle_input = CANONICAL[:20]

print(f'const COMMITMENT: &str = "{hashlib.sha256(server_seed).hexdigest()}";')
print(f'const SEED_FOUR: &str = "{s.hex()}";')
print(f'const SEED_TWO_EMPTY: &str = "{s_empty.hex()}";')
print(rust_list("HOLE_1", shuffle(CANONICAL, s, 1, 0)))
print(rust_list("HOLE_2", shuffle(CANONICAL, s, 2, 0)))
print(rust_list("HOLE_1_TWO_EMPTY", shuffle(CANONICAL, s_empty, 1, 0)))
print(rust_list("RESHUFFLE_H3_K1", shuffle(reshuffle_input, s, 3, 1)))
