#!/usr/bin/env python3
"""Times the requests whose cost could grow with the database: the lobby's first page and a page
after its cursor, an account's games (first page and a page after its cursor), a finished
game's public view, export and audit. One client, one request at a time, `--requests` of each kind;
the games and the account are picked from the database (psql) before the timing starts.

Prints one JSON object: per kind, p50/p99/max in milliseconds and the count of answers that were
not 200. Used by scripts/bench on a large database and on a small one, in one sitting."""

import argparse
import json
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request


def psql(database, query):
    lines = subprocess.run(["psql", "-qtA", "-d", database, "-c", query], check=True,
                           capture_output=True, text=True).stdout.split()
    return [line for line in lines if line]


def get(url, token=None):
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        body, status = error.read(), error.code
    return (time.perf_counter() - started) * 1000, status, body


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def timed(paths, requests, token=None):
    """Requests each of `paths` in turn, `requests` in all."""
    latencies, failed = [], 0
    for n in range(requests):
        latency, status, _ = get(paths[n % len(paths)], token)
        latencies.append(latency)
        failed += status != 200
    return {"p50_ms": round(percentile(latencies, 50), 3),
            "p99_ms": round(percentile(latencies, 99), 3),
            "max_ms": round(max(latencies), 3), "not_200": failed}


def cursor_of(url, token=None):
    _, status, body = get(url, token)
    if status != 200:
        sys.exit(f"{url}: {status} {body[:200]!r}")
    return json.loads(body)["next_cursor"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--database", required=True, help="the server's database, for psql")
    parser.add_argument("--token", required=True, help="an account's token")
    parser.add_argument("--requests", type=int, default=1000)
    args = parser.parse_args()

    # Finished games spread over the whole table, in random order: most are not in any cache.
    finished = psql(args.database, "SELECT id FROM games WHERE status = 'finished' "
                                   f"ORDER BY random() LIMIT {args.requests}")
    random.shuffle(finished)
    if not finished:
        sys.exit("no finished game in the database")
    lobby = f"{args.url}/v1/games?status=waiting&limit=20"
    lobby_cursor = cursor_of(lobby)
    mine = f"{args.url}/v1/account/games?limit=20"
    mine_cursor = cursor_of(mine, args.token)
    if not lobby_cursor or not mine_cursor:
        sys.exit("the lobby and the account's games need more than one page")
    report = {
        "lobby_first_page": timed([lobby], args.requests),
        "lobby_after_cursor": timed([f"{lobby}&cursor={lobby_cursor}"], args.requests),
        "account_games_first_page": timed([mine], args.requests, args.token),
        "account_games_after_cursor": timed([f"{mine}&cursor={mine_cursor}"], args.requests,
                                            args.token),
        "finished_view": timed([f"{args.url}/v1/games/{g}" for g in finished], args.requests),
        "export": timed([f"{args.url}/v1/games/{g}/export" for g in finished], args.requests),
        "audit": timed([f"{args.url}/v1/games/{g}/audit" for g in finished], args.requests),
    }
    report["games_in_database"] = int(psql(args.database, "SELECT count(*) FROM games")[0])
    print(json.dumps(report, indent=2))
    if any(timing["not_200"] for timing in report.values() if isinstance(timing, dict)):
        sys.exit("some requests were refused: the figures above do not measure what they say")


if __name__ == "__main__":
    main()
