// The HTTP API as the page uses it: JSON in and out, problems (RFC 9457) turned into errors that
// carry the problem's `detail`, and the tokens this browser holds.

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

// Follows a game's log live: the SSE stream read with fetch, so that the token travels in the
// Authorization header and never in a URL. Calls onEntry for each entry; reconnects with
// Last-Event-ID when the stream ends, until `signal` aborts.
export async function follow(game, token, onEntry, signal, onTrouble) {
  let last = null;
  while (!signal.aborted) {
    try {
      const headers = { Accept: 'text/event-stream' };
      if (token) headers.Authorization = `Bearer ${token}`;
      if (last !== null) headers['Last-Event-ID'] = last;
      const response = await fetch(`/v1/games/${encodeURIComponent(game)}/stream`, { headers, signal });
      if (!response.ok) {
        const problem = await response.json().catch(() => ({}));
        onTrouble(new Problem(response.status, problem));
        if (response.status < 500) return;
      } else {
        last = await readEvents(response.body, onEntry, last);
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
