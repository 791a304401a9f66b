"""Seat and host tokens for scripts/test-schemathesis, as schemathesis auth.

A token that an OpenAPI link hands over (joining links to the seat's view and moves with
`Bearer {$response.body#/token}`) is a real credential of the game the link follows. Left to
itself, schemathesis counts a header it did not set through its auth as generated, and its
`ignored_auth` check then calls a 200 to that token a failure. Given through this provider, the
token is known to be real: the check instead sends the request again without it and with a bad
one, and expects 401 both times. Where no link gave a token, the operation gets the token of the
live game the script prepared (the host's for cancelling, a seat's otherwise).
"""

import os
import re

import schemathesis

# A token of this server: 64 lowercase hex characters. A value schemathesis generated is not one.
SERVER_TOKEN = re.compile(r"Bearer [0-9a-f]{64}")
SEAT = os.environ["GOLF_FUZZ_SEAT_TOKEN"]
HOST = os.environ["GOLF_FUZZ_HOST_TOKEN"]


def needs_bearer(case):
    requirements = case.operation.definition.raw.get("security", [])
    return any("bearer" in requirement for requirement in requirements)


@schemathesis.auth(refresh_interval=None, retry_on=[])
class GolfTokens:
    def get(self, case, context):
        if not needs_bearer(case):
            return None
        handed_over = case.headers.get("Authorization") if case.headers else None
        if handed_over and SERVER_TOKEN.fullmatch(handed_over):
            return handed_over
        is_cancel = case.method.upper() == "DELETE" and case.path == "/v1/games/{id}"
        return f"Bearer {HOST if is_cancel else SEAT}"

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = data
