"""A small Golf bot on the client that openapi-python-client generates from openapi/openapi.json.

It takes a seat (in the game given by --game, or in one it creates, where --bot seats the server's
bots in the other seats; --grid, --jokers and --knock create it under house rules), plays every
move it is offered by choosing one entry of `legal_moves` and sending it back unchanged (knocking,
when the rules allow it, once at most one of its cards is face down), waits for the other seats on
the game's stream, and prints the totals and winners once the game is finished.

It plays as an account when given one: --sign-up USERNAME creates the account (and prints its
token, which the server shows only once), --account-token TOKEN (or the GOLF_ACCOUNT_TOKEN
environment variable) uses an existing one. The game is then created and joined with the account
token, which binds the seat to the account and, in that game, acts as the seat's token: the bot
plays with it. Generate the client first (see docs/CLIENTS.md); `golf_api` is the
generated package.
"""

import argparse
import os
import sys
import time
from uuid import UUID

import httpx
from golf_api import AuthenticatedClient, Client
from golf_api.api.accounts import create_account, own_account
from golf_api.api.games import create_game, join_game, make_move, own_view
from golf_api.models import (
    BotKind,
    CreateAccountBody,
    CreateGameBody,
    DiscardMove,
    DrawMove,
    FlipMove,
    GridShape,
    JoinBody,
    KnockMove,
    Problem,
    RevealMove,
    RulesInput,
    Source,
    Stage,
    Status,
    SwapMove,
    View,
)
from golf_api.types import UNSET, Response

# How long the bot waits for the next bytes of an answer. A stream waiting for other seats (who
# may be people) gets a keep-alive every 15 s, so only a server that stopped answering trips it.
TIMEOUT_S = 60.0

# Problems after which nothing was applied and the same move may go through a moment later (the
# other seats' moves race ours at the initial reveal); given up after RETRIES in a row.
RETRY_LATER = {"write_conflict", "database_busy", "unavailable"}
RETRIES = 10

# A card taken from the discard pile must be swapped, so take it only when that saves this much.
GOOD_GAIN = 4.0


def rank_of(code: str) -> str:
    """A card's rank: the code without its suit; both jokers (JR, JB) share the rank "joker"."""
    return "joker" if code in ("JR", "JB") else code[:-1]


def card_value(code: str, joker_value: int = -2) -> int:
    """The points a card scores on its own: Ace 1, Two -2, King 0, Jack and Queen 10, a joker the
    game's joker_value, others face value."""
    rank = rank_of(code)
    if rank == "joker":
        return joker_value
    if rank == "A":
        return 1
    if rank == "2":
        return -2
    if rank == "K":
        return 0
    if rank in ("J", "Q"):
        return 10
    return int(rank)


def column_score(cards: list[str | None]) -> float:
    """A column's points, counting a face-down card as an average card (about 5): 0 when its
    cards all have one rank (the default pair rule)."""
    known = [card for card in cards if card is not None]
    if len(known) == len(cards) and len({rank_of(card) for card in known}) == 1:
        return 0.0
    return sum(5.0 if card is None else card_value(card) for card in cards)


def column_of(view: View, position: int) -> list[int]:
    """The positions of `position`'s column, top to bottom, on the grid the view describes
    (`grid_shape`: rows x columns, row-major; 2 x 3 by default)."""
    rows, columns = view.grid_shape.rows, view.grid_shape.columns
    return [row * columns + position % columns for row in range(rows)]


def gain(view: View, grid: list[str | None], position: int, card: str) -> float:
    """How many points placing `card` at `position` saves (negative when it costs)."""
    column = column_of(view, position)
    after = list(grid)
    after[position] = card
    return column_score([grid[p] for p in column]) - column_score([after[p] for p in column])


def best_swap(view: View, moves: list, grid: list[str | None], card: str) -> SwapMove:
    swaps = [m for m in moves if isinstance(m, SwapMove)]
    return max(swaps, key=lambda m: gain(view, grid, m.position, card))


def choose(view: View) -> object:
    """One entry of the view's `legal_moves`, as the server wrote it.

    Reveal the first cards offered (however many the rules ask); knock when it is offered and at
    most one card is face down; take the discard when placing it saves points, else draw from the
    stock; swap the drawn card where it saves the most, or discard it when it would save
    nothing; flip the first face-down card when a flip is offered.
    """
    moves = view.legal_moves or []
    grid = list(view.players[view.you].grid)
    if view.stage == Stage.REVEAL:
        return next(m for m in moves if isinstance(m, RevealMove))
    if view.stage == Stage.DRAW:
        knock = next((m for m in moves if isinstance(m, KnockMove)), None)
        if knock is not None and grid.count(None) <= 1:
            return knock
        draws = {m.source: m for m in moves if isinstance(m, DrawMove)}
        top = view.discard_top
        worth_taking = isinstance(top, str) and max(gain(view, grid, p, top) for p in range(len(grid))) >= GOOD_GAIN
        if worth_taking and Source.DISCARD in draws:
            return draws[Source.DISCARD]
        return draws[Source.STOCK]
    if view.stage == Stage.PLACE:
        card = view.drawn.card
        swap = best_swap(view, moves, grid, card)
        discard = next((m for m in moves if isinstance(m, DiscardMove)), None)
        if discard is not None and gain(view, grid, swap.position, card) <= 0:
            return discard
        return swap
    flips = [m for m in moves if isinstance(m, FlipMove)]
    return flips[0] if flips else moves[0]


def expect(response: Response, what: str):
    """The parsed answer, or exit with the problem the server answered."""
    parsed = response.parsed
    if isinstance(parsed, Problem) or parsed is None:
        detail = parsed.to_dict() if isinstance(parsed, Problem) else response.content.decode()
        sys.exit(f"{what}: {int(response.status_code)} {detail}")
    return parsed


def wait_for_next_entry(seat: AuthenticatedClient, game: UUID, after: int) -> None:
    """Blocks until the game's log has an entry past `after`, read from its live stream."""
    http = seat.get_httpx_client()
    with http.stream("GET", f"/v1/games/{game}/stream", params={"after": after}) as stream:
        if stream.status_code != 200:
            sys.exit(f"stream: {stream.status_code} {stream.read().decode()}")
        for line in stream.iter_lines():
            if line.startswith("data:"):
                return


def account_token(args: argparse.Namespace) -> str | None:
    """The token of the account to play as: a new one for --sign-up (printed, since the server
    shows it only once), else --account-token or GOLF_ACCOUNT_TOKEN, checked with the server;
    None to play without one."""
    if args.sign_up:
        anonymous = Client(base_url=args.url, timeout=httpx.Timeout(TIMEOUT_S))
        body = CreateAccountBody(username=args.sign_up)
        created = expect(create_account.sync_detailed(client=anonymous, body=body), "sign up")
        print(f"account {created.username} created; its token (shown once): {created.token}", flush=True)
        return created.token
    token = args.account_token or os.environ.get("GOLF_ACCOUNT_TOKEN")
    if token:
        holder = AuthenticatedClient(base_url=args.url, token=token, timeout=httpx.Timeout(TIMEOUT_S))
        account = expect(own_account.sync_detailed(client=holder), "account")
        print(f"playing as account {account.username}", flush=True)
    return token or None


def take_seat(args: argparse.Namespace, account: str | None) -> tuple[UUID, str]:
    """Joins --game, or creates a game, joins it and seats --bot bots in the other seats; with an
    account, both as the account (its host and its seat). Answers the game and the token to play
    with: the account's, or the seat's."""
    anonymous = Client(base_url=args.url, timeout=httpx.Timeout(TIMEOUT_S))
    as_account = AuthenticatedClient(base_url=args.url, token=account) if account else None
    host = None
    game = UUID(args.game) if args.game else None
    if game is None:
        rules = RulesInput(grid=GridShape(args.grid), jokers=2 if args.jokers else 0, knock=args.knock)
        body = CreateGameBody(seats=args.seats, holes=args.holes, rules=rules)
        created = expect(create_game.sync_detailed(client=as_account or anonymous, body=body), "create")
        game = created.id
        host = as_account or AuthenticatedClient(base_url=args.url, token=created.host_token)
        print(f"created game {game}", flush=True)
    # The spec lets anyone join (its security lists `{}`), but openapi-python-client asks for an
    # AuthenticatedClient anyway (its issue 1372): without a token, the plain client is right.
    joiner = as_account or host or anonymous
    # An account's seat takes the account's display name unless --name says otherwise.
    name = args.name or (UNSET if account else "Python bot")
    joined = expect(join_game.sync_detailed(game, client=joiner, body=JoinBody(name=name)), "join")
    print(f"{'the account' if name is UNSET else name} took seat {joined.seat}", flush=True)
    if host is not None and args.bot:
        for n in range(1, args.seats):
            bot = JoinBody(name=f"{args.bot.capitalize()} bot {n}", bot=BotKind(args.bot))
            expect(join_game.sync_detailed(game, client=host, body=bot), "seat a bot")
    return game, account or joined.token


def play(args: argparse.Namespace) -> View:
    game, token = take_seat(args, account_token(args))
    seat = AuthenticatedClient(base_url=args.url, token=token, timeout=httpx.Timeout(TIMEOUT_S))
    view = expect(own_view.sync_detailed(game, client=seat), "view")
    retries = 0
    while view.status != Status.FINISHED:
        if view.legal_moves:
            answer = make_move.sync_detailed(game, client=seat, body=choose(view))
            problem = answer.parsed
            if isinstance(problem, Problem) and problem.code in RETRY_LATER and retries < RETRIES:
                retries += 1
                time.sleep(0.1 * retries)
                view = expect(own_view.sync_detailed(game, client=seat), "view")
                continue
            retries = 0
            view = expect(answer, "move")
        else:
            wait_for_next_entry(seat, game, view.version)
            view = expect(own_view.sync_detailed(game, client=seat), "view")
    return view


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8080", help="the server's base URL")
    parser.add_argument("--game", help="the id of a game to join (default: create one)")
    parser.add_argument("--name", help='the name to play under (default: "Python bot", or the account\'s display name)')
    account = parser.add_mutually_exclusive_group()
    account.add_argument("--sign-up", metavar="USERNAME", help="create an account and play as it (prints its token)")
    account.add_argument(
        "--account-token", metavar="TOKEN", help="play as this account (default: $GOLF_ACCOUNT_TOKEN, if set)"
    )
    parser.add_argument("--seats", type=int, default=2, help="seats of a created game")
    parser.add_argument("--holes", type=int, default=1, help="holes of a created game")
    parser.add_argument(
        "--bot", choices=[k.value for k in BotKind], help="seat server bots in a created game's other seats"
    )
    parser.add_argument("--grid", choices=[g.value for g in GridShape], default="2x3", help="grid of a created game")
    parser.add_argument("--jokers", action="store_true", help="two jokers in a created game's deck")
    parser.add_argument("--knock", action="store_true", help="a created game allows knocking")
    args = parser.parse_args()
    view = play(args)
    for player in view.players:
        print(f"seat {player.seat} {player.name}: total {player.total} (holes {player.hole_scores})")
    print(f"game {view.id} finished; winners: {view.winners}")


if __name__ == "__main__":
    main()
