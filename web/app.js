// The web client's entry point: routes the page by its hash (#/ the lobby, #/game/ID a table,
// #/replay/ID a finished game's replay, #/check an exported log from disk). An invitation link is
// #/game/ID: it names the game, never a token (tokens stay in this browser's localStorage).

import { say } from './dom.js';
import { showLobby } from './lobby.js';
import { showFileCheck, showReplay } from './replay.js';
import { showTable } from './table.js';

const main = document.getElementById('main');

// A game id as the API names games. The id from the address bar goes into API paths only if it is
// one, so that a crafted link cannot make the page call another endpoint.
const GAME_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
let leaving = new AbortController();

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

async function route() {
  leaving.abort();
  leaving = new AbortController();
  say('');
  const [, page, raw] = (location.hash || '#/').match(/^#\/([a-z]*)\/?([^/]*)$/) || [];
  const id = raw && decodeURIComponent(raw).toLowerCase();
  try {
    if ((page === 'game' || page === 'replay') && id && !GAME_ID.test(id)) {
      say('This link does not name a game: a game id looks like 4b3a1f64-5f2c-4a8e-9d0b-1c2d3e4f5a6b.');
      await showLobby(main, navigate);
    } else if (page === 'game' && id) await showTable(main, id, leaving.signal);
    else if (page === 'replay' && id) await showReplay(main, id);
    else if (page === 'check') showFileCheck(main);
    else await showLobby(main, navigate);
  } catch (error) {
    say(error.message);
  }
  main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', route);
route();
