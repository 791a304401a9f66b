#!/usr/bin/env python3
"""Measures the fair-play findings (issue 39) against a running server, with the standard library
only: the rating a farming loop leaves, the time to match two seeks under 200 squatting ones, the
delay of one account's webhook delivery behind another's slow receiver, /healthz while expert bots
play, and GET /v1/account/games?turn=mine for an account with 10 and with 1,500 finished games.

Usage: scripts/bench_fair_play.py http://127.0.0.1:8080 postgres://postgres@127.0.0.1/golf_fair
[farming squatting deliveries healthz turn_mine] (all by default). The server runs on that PostgreSQL database (fresh) with GOLF_WEBHOOK_ALLOW_PRIVATE=true,
GOLF_RATE_LIMIT_PER_MIN=0 and GOLF_MAX_EXPERT_SEATS_PER_MIN=0; psql sets the squatters' ratings.
Not part of CI: docs/SCALING.md ("Fair play measured") has its figures.
"""

import http.server
import json
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

BASE, DATABASE = sys.argv[1], sys.argv[2]


def call(method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read()
            return response.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def sign_up(name):
    status, created = call("POST", "/v1/accounts", {"username": name})
    assert status == 201, created
    return created["token"]


def join(game, body, token):
    status, joined = call("POST", f"/v1/games/{game}/players", body, token)
    assert status == 201, joined
    return joined


def rating(name):
    return call("GET", f"/v1/accounts/{name}")[1]["rating"]


def farming():
    token = sign_up("farmer")
    for _ in range(12):
        status, game = call("POST", "/v1/games", {"seats": 4, "holes": 1, "rated": True}, token)
        assert status == 201, game
        join(game["id"], {}, token)
        for bot in ["random", "random", "random"]:
            join(game["id"], {"name": "Bot", "bot": bot}, token)
        assert call("POST", f"/v1/games/{game['id']}/leave", None, token)[0] == 200
    time.sleep(3)
    after = rating("farmer")
    print(f"farming: after 12 games of itself and three bots, left to the greedy bot: "
          f"rating {after['value']:.0f} after {after['games']} rated games")


def squatting():
    for i in range(200):
        name = f"squat{i}"
        token = sign_up(name)
        own = 500 + 4 * i
        subprocess.run(["psql", DATABASE, "-qc",
                        f"UPDATE accounts SET rating_value = {own} WHERE username = '{name}'"],
                       check=True)
        body = {"holes": 1, "rated": True, "rating_range": [own - 1, own + 1]}
        status, seek = call("POST", "/v1/seeks", body, token)
        assert status == 201 and seek["status"] == "waiting", seek
    first, second = sign_up("plain1"), sign_up("plain2")
    call("POST", "/v1/seeks", {"holes": 1, "rated": True}, first)
    started = time.perf_counter()
    status, seek = call("POST", "/v1/seeks", {"holes": 1, "rated": True}, second)
    took = (time.perf_counter() - started) * 1000
    print(f"squatting: 200 squatting seeks, then two plain ones: the second {seek['status']} "
          f"in {took:.1f} ms")


class Receiver(http.server.BaseHTTPRequestHandler):
    """Records when each POST came; the path /slow answers after 6 s."""
    arrivals = {}

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        Receiver.arrivals.setdefault(self.path, []).append(time.perf_counter())
        if self.path == "/slow":
            time.sleep(6)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def deliveries():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    slow, fast = sign_up("slowhook"), sign_up("fasthook")
    for token, path in [(slow, "/slow"), (fast, "/fast")]:
        status, _ = call("PUT", "/v1/account/webhook", {"url": f"http://127.0.0.1:{port}{path}"},
                         token)
        assert status == 200
    for i in range(20):
        call("POST", "/v1/challenges", {"to": ["slowhook"]}, sign_up(f"author{i}"))
    time.sleep(1)
    author = sign_up("eve")
    sent = time.perf_counter()
    call("POST", "/v1/challenges", {"to": ["fasthook"]}, author)
    while "/fast" not in Receiver.arrivals:
        time.sleep(0.01)
    delay = Receiver.arrivals["/fast"][0] - sent
    print(f"deliveries: one account's delivery behind another's 20 deliveries to a 6 s "
          f"receiver: {delay * 1000:.0f} ms")
    server.shutdown()


def expert_games(stop):
    while not stop.is_set():
        status, game = call("POST", "/v1/games",
                            {"seats": 4, "holes": 18, "rules": {"grid": "3x3"}})
        assert status == 201, game
        for _ in range(4):
            join(game["id"], {"name": "Deep", "bot": "expert"}, game["host_token"])


def healthz_with_experts():
    stop = threading.Event()
    players = [threading.Thread(target=expert_games, args=(stop,)) for _ in range(3)]
    for player in players:
        player.start()
    time.sleep(1)
    latencies = []
    for _ in range(300):
        started = time.perf_counter()
        with urllib.request.urlopen(BASE + "/healthz", timeout=60) as response:
            response.read()
        latencies.append((time.perf_counter() - started) * 1000)
        time.sleep(0.02)
    stop.set()
    for player in players:
        player.join()
    latencies.sort()
    print(f"healthz: 300 requests while three clients seat four expert bots in 18-hole 3x3 "
          f"games: p50 {statistics.median(latencies):.1f} ms, "
          f"p99 {latencies[int(len(latencies) * 0.99) - 1]:.1f} ms")


def turn_mine(name, finished):
    token = sign_up(name)
    for _ in range(finished):
        status, game = call("POST", "/v1/games", {"seats": 2, "holes": 1})
        join(game["id"], {}, token)
        join(game["id"], {"name": "Bot", "bot": "greedy"}, game["host_token"])
        assert call("POST", f"/v1/games/{game['id']}/leave", None, token)[0] == 200
    for _ in range(5):
        status, game = call("POST", "/v1/games", {"seats": 2, "holes": 1})
        join(game["id"], {}, token)
        join(game["id"], {"name": "Bot", "bot": "greedy"}, game["host_token"])
    times = []
    for _ in range(100):
        started = time.perf_counter()
        status, page = call("GET", "/v1/account/games?turn=mine", None, token)
        times.append((time.perf_counter() - started) * 1000)
        assert status == 200 and len(page["games"]) == 5, page
    times.sort()
    print(f"turn=mine: {finished} finished games and 5 in play: median "
          f"{statistics.median(times):.2f} ms, p99 {times[98]:.2f} ms")
    times = []
    for _ in range(20):
        started = time.perf_counter()
        status, _ = call("GET", "/v1/account/games?turn=mine&status=finished", None, token)
        times.append((time.perf_counter() - started) * 1000)
    print(f"turn=mine&status=finished: {finished} finished games: answered {status} in a median "
          f"{statistics.median(times):.2f} ms")


MEASUREMENTS = {
    "farming": farming,
    "squatting": squatting,
    "deliveries": deliveries,
    "healthz": healthz_with_experts,
    "turn_mine": lambda: (turn_mine("few", 10), turn_mine("many", 1500)),
}
for name in sys.argv[3:] or MEASUREMENTS:
    MEASUREMENTS[name]()
