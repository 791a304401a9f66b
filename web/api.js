// The HTTP API as the page uses it: JSON in and out, problems (RFC 9457) turned into errors that
// carry the problem's `detail`, the tokens this browser holds (seats, hosts, the account), and the
// Server-Sent Events streams (a game's, the account's) read with fetch.

export class Problem extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || String(status));
    this.status = status;
    this.code = problem.code || 'unknown';
  }
}

// Sends a request; answers {status, body, etag} (body null on 204 and 304), or throws a Problem.
export async function call(method, path, { body, token, headers = {} } = {}) {
  const sent = { ...headers };
  if (body !== undefined) sent['Content-Type'] = 'application/json';
  if (token) sent.Authorization = `Bearer ${token}`;
  const response = await fetch(path, {
    method,
    headers: sent,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const type = response.headers.get('Content-Type') || '';
  // application/json and application/problem+json; not application/x-ndjson, which is text.
  const json = /^application\/(problem\+)?json/.test(type);
  if (!response.ok && response.status !== 304) {
    const problem = json ? await response.json() : { detail: await response.text() };
    throw new Problem(response.status, problem);
  }
  let parsed = null;
  if (response.status !== 204 && response.status !== 304) {
    parsed = json ? await response.json() : await response.text();
  }
  return { status: response.status, body: parsed, etag: response.headers.get('ETag') };
}

// Tokens are kept per game in localStorage, so that a reload (or a later visit) keeps the seat.
const SEAT = 'golf.seat.';
const HOST = 'golf.host.';

export function seatOf(game) {
  try {
    return JSON.parse(localStorage.getItem(SEAT + game));
  } catch {
    return null;
  }
}

export function keepSeat(game, seat) {
  localStorage.setItem(SEAT + game, JSON.stringify(seat));
}

// Forgets a seat whose token the server no longer takes (e.g. another server's database).
export function forgetSeat(game) {
  localStorage.removeItem(SEAT + game);
}

export function hostTokenOf(game) {
  return localStorage.getItem(HOST + game);
}

export function keepHostToken(game, token) {
  localStorage.setItem(HOST + game, token);
}

// The games this browser holds a seat in, most recent first.
export function myGames() {
  const games = [];
  for (let i = 0; i < localStorage.length; i += 1) {
    const key = localStorage.key(i);
    if (key.startsWith(SEAT)) {
      const seat = seatOf(key.slice(SEAT.length));
      if (seat) games.push({ id: key.slice(SEAT.length), ...seat });
    }
  }
  return games.sort((a, b) => (b.joinedAt || 0) - (a.joinedAt || 0));
}

// The account this browser is signed in to ({username, display_name, token}), or null. Its token
// stays in this browser until the player signs out; the account page shows it for another device.
const ACCOUNT = 'golf.account';
// The id of the last account event this browser has seen, so that a reload does not notify again.
const SEEN = 'golf.account.seen';

export function accountOf() {
  try {
    return JSON.parse(localStorage.getItem(ACCOUNT));
  } catch {
    return null;
  }
}

export function keepAccount(account) {
  localStorage.setItem(ACCOUNT, JSON.stringify(account));
}

// Signing out forgets the account and the seats it took in this browser (their tokens would
// still play as the account); seats taken without an account stay.
export function forgetAccount() {
  const account = accountOf();
  localStorage.removeItem(ACCOUNT);
  localStorage.removeItem(SEEN);
  if (!account) return;
  for (const game of myGames()) {
    if (game.account === account.username) forgetSeat(game.id);
  }
}

export function lastSeenEvent() {
  const seen = Number(localStorage.getItem(SEEN));
  return Number.isSafeInteger(seen) && seen > 0 ? seen : null;
}

export function keepLastSeenEvent(id) {
  localStorage.setItem(SEEN, String(id));
}

// Follows a game's log live. Calls onEntry for each entry, until `signal` aborts.
export function follow(game, token, onEntry, signal, onTrouble) {
  return followStream(`/v1/games/${encodeURIComponent(game)}/stream`, token, null, onEntry, signal, onTrouble);
}

// Follows a stream of Server-Sent Events, read with fetch so that the token travels in the
// Authorization header and never in a URL, from after the id `after` (null: from the start).
// Calls onMessage for each message; reconnects with Last-Event-ID when the stream ends, until
// `signal` aborts or the server refuses the stream (a 4xx).
export async function followStream(path, token, after, onMessage, signal, onTrouble) {
  let last = after === null ? null : String(after);
  while (!signal.aborted) {
    try {
      const headers = { Accept: 'text/event-stream' };
      if (token) headers.Authorization = `Bearer ${token}`;
      if (last !== null) headers['Last-Event-ID'] = last;
      const response = await fetch(path, { headers, signal });
      if (!response.ok) {
        const problem = await response.json().catch(() => ({}));
        onTrouble(new Problem(response.status, problem));
        if (response.status < 500) return;
      } else {
        last = await readEvents(response.body, onMessage, last);
      }
    } catch (error) {
      if (signal.aborted) return;
      onTrouble(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// Reads Server-Sent Events until the stream ends; answers the last id seen.
async function readEvents(body, onEntry, lastSeen) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let last = lastSeen;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return last;
    buffer += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) last = line.slice(3).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trimStart();
      }
      if (data) onEntry(JSON.parse(data));
    }
  }
}
