// A small Golf bot on types that openapi-typescript generates from openapi/openapi.json, calling
// the API with openapi-fetch. It takes a seat (in the game given by --game, or in one it creates,
// where --bot seats the server's bots in the other seats; --grid, --jokers and --knock create it
// under house rules), plays every move it is offered by choosing one entry of `legal_moves` and
// sending it back unchanged (knocking, when the rules allow it, once at most one of its cards is
// face down), waits for the other seats on
// the game's stream, and prints the totals and winners once the game is finished.
//
// It plays as an account when given one: --sign-up USERNAME creates the account (and prints its
// token, which the server shows only once), --account-token TOKEN (or the GOLF_ACCOUNT_TOKEN
// environment variable) uses an existing one. The game is then created and joined with the
// account token, which binds the seat to the account and, in that game, acts as the seat's token:
// the bot plays with it. Generate the types first (see docs/CLIENTS.md):
// "golf-api" is the generated file.
import { parseArgs } from "node:util";
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "golf-api";

type View = components["schemas"]["View"];
type Move = components["schemas"]["Move"];
type SwapMove = components["schemas"]["SwapMove"];
type Card = components["schemas"]["Card"];
type Grid = View["players"][number]["grid"];
type Api = Client<paths>;

// Problems after which nothing was applied and the same move may go through a moment later (the
// other seats' moves race ours at the initial reveal); given up after RETRIES in a row.
const RETRY_LATER = ["write_conflict", "database_busy", "unavailable"];
const RETRIES = 10;

// A card taken from the discard pile must be swapped, so take it only when that saves this much.
const GOOD_GAIN = 4;

/** A card's rank: the code without its suit; both jokers (JR, JB) share the rank "joker". */
function rankOf(code: string): string {
  return code === "JR" || code === "JB" ? "joker" : code.slice(0, -1);
}

/** The points a card scores on its own: Ace 1, Two -2, King 0, Jack and Queen 10, a joker -2, others face value. */
function cardValue(code: string): number {
  const rank = rankOf(code);
  switch (rank) {
    case "joker":
      return -2;
    case "A":
      return 1;
    case "2":
      return -2;
    case "K":
      return 0;
    case "J":
    case "Q":
      return 10;
    default:
      return Number(rank);
  }
}

/** A column's points, counting a face-down card as an average card (about 5): 0 when all its cards share a rank. */
function columnScore(cards: (string | null)[]): number {
  const known = cards.filter((card): card is string => card !== null);
  if (known.length === cards.length && new Set(known.map(rankOf)).size === 1) {
    return 0;
  }
  return cards.reduce((sum, card) => sum + (card === null ? 5 : cardValue(card)), 0);
}

/** The positions of `position`'s column, top to bottom, on the view's grid (`grid_shape`, row-major). */
function columnOf(view: View, position: number): number[] {
  const { rows, columns } = view.grid_shape;
  return Array.from({ length: rows }, (_, row) => row * columns + (position % columns));
}

/** How many points placing `card` at `position` saves (negative when it costs). */
function gain(view: View, grid: Grid, position: number, card: Card): number {
  const column = columnOf(view, position);
  const after = grid.map((old, p) => (p === position ? card : old));
  const at = (g: Grid, p: number) => g[p] ?? null;
  return columnScore(column.map((p) => at(grid, p))) - columnScore(column.map((p) => at(after, p)));
}

/**
 * One entry of the view's `legal_moves`, as the server wrote it.
 *
 * Reveal the first cards offered (however many the rules ask); knock when it is offered and at most
 * one card is face down; take the discard when placing it saves points, else draw from the stock;
 * swap the drawn card where it saves the most, or discard it when it would save nothing; flip the
 * first face-down card when a flip is offered.
 */
function choose(view: View): Move {
  const moves = view.legal_moves ?? [];
  const grid = view.players.find((p) => p.seat === view.you)?.grid ?? [];
  const first = <T extends Move["type"]>(type: T) =>
    moves.find((m): m is Extract<Move, { type: T }> => m.type === type);
  if (view.stage === "draw") {
    const knock = first("knock");
    if (knock && grid.filter((card) => card === null).length <= 1) {
      return knock;
    }
    const top = view.discard_top;
    const worthTaking = typeof top === "string" && grid.some((_, p) => gain(view, grid, p, top) >= GOOD_GAIN);
    const fromDiscard = moves.find((m) => m.type === "draw" && m.source === "discard");
    const fromStock = moves.find((m) => m.type === "draw" && m.source === "stock");
    return (worthTaking && fromDiscard) || fromStock || fromDiscard || moves[0]!;
  }
  if (view.stage === "place") {
    const card = view.drawn?.card;
    const swaps = moves.filter((m): m is SwapMove => m.type === "swap");
    if (typeof card !== "string" || swaps.length === 0) {
      return moves[0]!;
    }
    const best = swaps.reduce((a, b) => (gain(view, grid, b.position, card) > gain(view, grid, a.position, card) ? b : a));
    const discard = first("discard");
    return discard && gain(view, grid, best.position, card) <= 0 ? discard : best;
  }
  return first("reveal") ?? first("flip") ?? moves[0]!;
}

/** The answer's data, or exit with the problem the server answered. */
function expect<T>(what: string, answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) {
    console.error(`${what}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
    process.exit(1);
  }
  return answer.data;
}

function client(url: string, token?: string): Api {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  return createClient<paths>({ baseUrl: url, headers });
}

/** Resolves once the game's log has an entry past `after`, read from its live stream. */
async function waitForNextEntry(seat: Api, id: string, after: number): Promise<void> {
  const answer = await seat.GET("/v1/games/{id}/stream", {
    params: { path: { id }, query: { after } },
    parseAs: "stream",
  });
  const stream = expect("stream", answer);
  if (stream === null) {
    return;
  }
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      text += decoder.decode(value, { stream: !done });
      if (done || /^data:/m.test(text)) {
        return;
      }
    }
  } finally {
    await reader.cancel();
  }
}

interface Options {
  url: string;
  game?: string;
  name?: string;
  signUp?: string;
  accountToken?: string;
  seats: number;
  holes: number;
  bot?: components["schemas"]["BotKind"];
  rules: components["schemas"]["RulesInput"];
}

/**
 * The token of the account to play as: a new one for --sign-up (printed, since the server shows
 * it only once), else --account-token or GOLF_ACCOUNT_TOKEN, checked with the server; undefined
 * to play without one.
 */
async function accountToken(options: Options): Promise<string | undefined> {
  if (options.signUp !== undefined) {
    const body = { username: options.signUp };
    const created = expect("sign up", await client(options.url).POST("/v1/accounts", { body }));
    console.log(`account ${created.username} created; its token (shown once): ${created.token}`);
    return created.token;
  }
  if (options.accountToken) {
    const account = expect("account", await client(options.url, options.accountToken).GET("/v1/account"));
    console.log(`playing as account ${account.username}`);
  }
  return options.accountToken || undefined;
}

/**
 * Joins --game, or creates a game, joins it and seats --bot bots in the other seats; with an
 * account, both as the account (its host and its seat). Answers the game and the token to play
 * with: the account's, or the seat's.
 */
async function takeSeat(options: Options, account?: string): Promise<{ id: string; token: string }> {
  const asAccount = account === undefined ? undefined : client(options.url, account);
  let id = options.game;
  let host: Api | undefined;
  if (id === undefined) {
    const body = { seats: options.seats, holes: options.holes, rules: options.rules };
    const created = expect("create", await (asAccount ?? client(options.url)).POST("/v1/games", { body }));
    id = created.id;
    host = asAccount ?? client(options.url, created.host_token);
    console.log(`created game ${id}`);
  }
  const joiner = asAccount ?? host ?? client(options.url);
  // An account's seat takes the account's display name unless --name says otherwise.
  const name = options.name ?? (account === undefined ? "TypeScript bot" : undefined);
  const joined = expect(
    "join",
    await joiner.POST("/v1/games/{id}/players", { params: { path: { id } }, body: name === undefined ? {} : { name } }),
  );
  console.log(`${name ?? "the account"} took seat ${joined.seat}`);
  if (host && options.bot) {
    for (let n = 1; n < options.seats; n++) {
      const bot = { name: `${options.bot} bot ${n}`, bot: options.bot };
      expect("seat a bot", await host.POST("/v1/games/{id}/players", { params: { path: { id } }, body: bot }));
    }
  }
  const token = account ?? joined.token;
  if (!token) {
    console.error("join: the answer has no token");
    process.exit(1);
  }
  return { id, token };
}

async function play(options: Options): Promise<View> {
  const { id, token } = await takeSeat(options, await accountToken(options));
  const seat = client(options.url, token);
  const path = { params: { path: { id } } };
  let view = expect("view", await seat.GET("/v1/games/{id}/view", path));
  let retries = 0;
  while (view.status !== "finished") {
    if (view.legal_moves && view.legal_moves.length > 0) {
      const answer = await seat.POST("/v1/games/{id}/moves", { ...path, body: choose(view) });
      if (answer.error && RETRY_LATER.includes(answer.error.code) && retries < RETRIES) {
        retries += 1;
        await new Promise((resolve) => setTimeout(resolve, 100 * retries));
        view = expect("view", await seat.GET("/v1/games/{id}/view", path));
        continue;
      }
      retries = 0;
      view = expect("move", answer);
    } else {
      await waitForNextEntry(seat, id, view.version);
      view = expect("view", await seat.GET("/v1/games/{id}/view", path));
    }
  }
  return view;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: "http://127.0.0.1:8080" },
      game: { type: "string" },
      name: { type: "string" },
      "sign-up": { type: "string" },
      "account-token": { type: "string" },
      seats: { type: "string", default: "2" },
      holes: { type: "string", default: "1" },
      bot: { type: "string" },
      grid: { type: "string", default: "2x3" },
      jokers: { type: "boolean", default: false },
      knock: { type: "boolean", default: false },
    },
  });
  const grid = values.grid;
  if (grid !== "2x2" && grid !== "2x3" && grid !== "2x4" && grid !== "3x3") {
    console.error("--grid: 2x2, 2x3, 2x4 or 3x3");
    process.exit(2);
  }
  if (values["sign-up"] !== undefined && values["account-token"] !== undefined) {
    console.error("--sign-up and --account-token: one or the other");
    process.exit(2);
  }
  const bot = values.bot;
  if (bot !== undefined && bot !== "random" && bot !== "greedy") {
    console.error("--bot: random or greedy");
    process.exit(2);
  }
  return {
    url: values.url,
    game: values.game,
    name: values.name,
    signUp: values["sign-up"],
    accountToken: values["account-token"] ?? process.env.GOLF_ACCOUNT_TOKEN,
    seats: Number(values.seats),
    holes: Number(values.holes),
    bot,
    rules: { grid, jokers: values.jokers ? 2 : 0, knock: values.knock },
  };
}

const view = await play(parseOptions());
for (const player of view.players) {
  console.log(`seat ${player.seat} ${player.name}: total ${player.total} (holes [${player.hole_scores.join(", ")}])`);
}
console.log(`game ${view.id} finished; winners: [${(view.winners ?? []).join(", ")}]`);
