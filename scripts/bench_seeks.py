"""Times seeks from the second seek of a pair to its seek_matched, against a running golf-server.

For each of --pairs pairs, one after the other: two new accounts; the first follows its account
stream and seeks a two-seat game; then the second seeks the same and the clock starts. Reported,
over the pairs: the second seek's answer (it is `matched`: the game, both seats and both
seek_matched were committed by then) and the arrival of seek_matched on the first account's
stream. Prints one JSON object on stdout. Standard library only; scripts/bench runs it.
"""

import argparse
import http.client
import json
import queue
import threading
import time
import urllib.parse
import uuid


class Connection:
    """One keep-alive connection to the server."""

    def __init__(self, url):
        parsed = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)

    def send(self, method, path, body=None, token=None):
        headers = {"content-type": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        self.connection.request(method, path, json.dumps(body) if body is not None else None,
                                headers)
        response = self.connection.getresponse()
        answer = json.loads(response.read() or b"null")
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {answer}")
        return answer


def follow(url, token, events, ready):
    """Puts on `events` the time each seek_matched arrives on the account's stream."""
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
    connection.request("GET", "/v1/account/stream?after=0",
                       headers={"authorization": f"Bearer {token}", "accept": "text/event-stream"})
    response = connection.getresponse()
    if response.status != 200:
        raise SystemExit(f"the account stream answered {response.status}: {response.read()!r}")
    ready.set()
    for raw in response:
        line = raw.decode().rstrip("\n")
        if line.startswith("data:") and '"seek_matched"' in line:
            events.put(time.perf_counter())
            break
    connection.close()


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--pairs", type=int, default=200)
    args = parser.parse_args()
    api = Connection(args.url)
    answers, notified = [], []
    run = uuid.uuid4().hex[:6]
    for pair in range(args.pairs):
        first, second = (api.send("POST", "/v1/accounts",
                                  {"username": f"s{run}{pair}{side}"})["token"]
                         for side in "ab")
        events, ready = queue.Queue(), threading.Event()
        stream = threading.Thread(target=follow, args=(args.url, first, events, ready), daemon=True)
        stream.start()
        if not ready.wait(10):
            raise RuntimeError(f"the first account's stream of pair {pair} did not open")
        seek = {"seats": 2, "holes": 1}
        waiting = api.send("POST", "/v1/seeks", seek, first)
        if waiting["status"] != "waiting":
            raise RuntimeError(f"the first seek of pair {pair} did not wait: {waiting}")
        started = time.perf_counter()
        matched = api.send("POST", "/v1/seeks", seek, second)
        answered = time.perf_counter()
        if matched["status"] != "matched":
            raise RuntimeError(f"the second seek of pair {pair} was not matched: {matched}")
        arrived = events.get(timeout=10)
        answers.append((answered - started) * 1000)
        notified.append((arrived - started) * 1000)
        stream.join(5)

    def summary(values):
        return {"p50": round(percentile(values, 0.5), 2), "p99": round(percentile(values, 0.99), 2),
                "max": round(max(values), 2)}

    print(json.dumps({"pairs": args.pairs, "second_seek_answer_ms": summary(answers),
                      "seek_matched_on_first_stream_ms": summary(notified)}, indent=2))


if __name__ == "__main__":
    main()
