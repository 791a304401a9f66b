// The web client's entry point: routes the page by its hash (#/ the lobby, #/game/ID a table,
// #/replay/ID a finished game's replay, #/check an exported log from disk). An invitation link is
// #/game/ID: it names the game, never a token (tokens stay in this browser's localStorage).

import { say } from './dom.js';
import { showLobby } from './lobby.js';
import { showFileCheck, showReplay } from './replay.js';
import { showTable } from './table.js';

const main = document.getElementById('main');
let leaving = new AbortController();

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

async function route() {
  leaving.abort();
  leaving = new AbortController();
  say('');
  const [, page, id] = (location.hash || '#/').match(/^#\/([a-z]*)\/?([^/]*)$/) || [];
  try {
    if (page === 'game' && id) await showTable(main, decodeURIComponent(id), leaving.signal);
    else if (page === 'replay' && id) await showReplay(main, decodeURIComponent(id));
    else if (page === 'check') showFileCheck(main);
    else await showLobby(main, navigate);
  } catch (error) {
    say(error.message);
  }
  main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', route);
route();
