"""Checks webhook signatures with an implementation that is not ours: the standardwebhooks package.

Run by scripts/test-webhooks against a real server (which must allow private webhook addresses):
starts a receiver on 127.0.0.1, signs up two accounts, registers a webhook for the first, starts a
game of the two, and verifies every delivery that arrives with
standardwebhooks.Webhook(secret).verify(body, headers). Prints the first delivery as received and
the verification result; exits non-zero if a delivery is missing or does not verify, or if a
tampered copy verifies.
"""

import argparse
import http.server
import json
import queue
import sys
import threading
import time
import urllib.request
import uuid

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

# How long to wait for a delivery.
DELIVERY_TIMEOUT_S = 30


def call(base, method, path, body=None, token=None):
    """The JSON answer of `method path`."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def start_receiver():
    """A receiver on 127.0.0.1 that queues every request (headers and raw body) and answers 204."""
    received = queue.Queue()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            received.put((dict(self.headers.items()), body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, received


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8080")
    args = parser.parse_args()
    server, received = start_receiver()
    suffix = uuid.uuid4().hex[:8]
    ada = call(args.url, "POST", "/v1/accounts", {"username": f"ada{suffix}"})["token"]
    bob = call(args.url, "POST", "/v1/accounts", {"username": f"bob{suffix}"})["token"]
    hook = f"http://127.0.0.1:{server.server_address[1]}/golf"
    secret = call(args.url, "PUT", "/v1/account/webhook", {"url": hook}, ada)["secret"]
    game = call(args.url, "POST", "/v1/games", {"seats": 2, "holes": 1}, ada)["id"]
    for token in (ada, bob):
        call(args.url, "POST", f"/v1/games/{game}/players", {}, token)
    started = time.monotonic()
    # The game started: ada gets game_started, and your_turn for the initial reveal.
    verifier = Webhook(secret)
    deliveries = []
    for _ in range(2):
        try:
            deliveries.append(received.get(timeout=DELIVERY_TIMEOUT_S))
            if len(deliveries) == 1:
                waited_ms = (time.monotonic() - started) * 1000
        except queue.Empty:
            sys.exit(f"verify_webhooks: only {len(deliveries)} deliveries within {DELIVERY_TIMEOUT_S} s")
    for number, (headers, body) in enumerate(deliveries):
        lowered = {name.lower(): value for name, value in headers.items()}
        event = verifier.verify(body, lowered)
        if number == 0:
            print("A delivery as received:")
            print(f"  POST {hook}")
            for name in ("content-type", "webhook-id", "webhook-timestamp", "webhook-signature"):
                print(f"  {name}: {lowered[name]}")
            print(f"  body: {body.decode()}")
        print(f"standardwebhooks 1.1.0 Webhook(secret).verify: OK, {event['type']} "
              f"(event {event['id']}, game {event['game_id']})")
        assert event["game_id"] == game, event
    tampered = deliveries[0][1].replace(b'"id":', b'"id":1')
    try:
        verifier.verify(tampered, {k.lower(): v for k, v in deliveries[0][0].items()})
        sys.exit("verify_webhooks: a tampered body verified")
    except WebhookVerificationError:
        print("standardwebhooks refuses the same delivery with its body altered: OK")
    print(f"the first delivery arrived {waited_ms:.0f} ms after the join that started the game")
    server.shutdown()


if __name__ == "__main__":
    main()
