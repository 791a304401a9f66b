// The web client's entry point: picks the page's language, then routes the page by its hash (#/
// the lobby, #/game/ID a table, #/replay/ID a finished game's replay, #/check an exported log
// from disk, #/help and #/help/ID how to play, with the options of game ID, #/account the
// account, #/player/NAME a player's profile, #/leaderboard the ratings' leaderboard, #/challenges
// the account's challenges, #/challenges/NAME with a challenge to NAME ready to send). An
// invitation link is #/game/ID: it names the game, never a token (tokens stay in this browser's
// localStorage). Signed in, the page follows the account's stream on every page (turns.js), which
// also opens the games its challenges start (challenges.js).

import { showAccount } from './account.js';
import { showChallenges, watchChallenges } from './challenges.js';
import { say, sayError } from './dom.js';
import { offerHelpOnce, showHelp } from './help.js';
import { chooseLanguage, currentLanguage, LANGUAGES, languageName, loadLanguages, preferredLanguage, t, useLanguage } from './i18n.js';
import { showLobby } from './lobby.js';
import { showProfile, USERNAME } from './profile.js';
import { showLeaderboard } from './ratings.js';
import { showFileCheck, showReplay } from './replay.js';
import { showTable } from './table.js';
import { watchTurns } from './turns.js';

const main = document.getElementById('page');

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
    if (['game', 'replay', 'help'].includes(page) && id && !GAME_ID.test(id)) {
      say(t('app.bad_link'));
      await showLobby(main, navigate, leaving.signal);
    } else if ((page === 'player' && !USERNAME.test(id || '')) || (page === 'challenges' && id && !USERNAME.test(id))) {
      say(t('app.bad_player_link'));
      await showLobby(main, navigate, leaving.signal);
    } else if (page === 'game' && id) await showTable(main, id, leaving.signal);
    else if (page === 'replay' && id) await showReplay(main, id);
    else if (page === 'check') showFileCheck(main);
    else if (page === 'help') await showHelp(main, id || null);
    else if (page === 'account') await showAccount(main);
    else if (page === 'player') await showProfile(main, id);
    else if (page === 'leaderboard') await showLeaderboard(main);
    else if (page === 'challenges') await showChallenges(main, id || null, leaving.signal);
    else await showLobby(main, navigate, leaving.signal);
    if (page !== 'help') offerHelpOnce();
  } catch (error) {
    sayError(error);
  }
  main.focus({ preventScroll: true });
}

// The strings of index.html (data-i18n: its text, data-i18n-label: its aria-label) and the switch.
function translatePage() {
  document.title = t('app.name');
  for (const element of document.querySelectorAll('[data-i18n]')) element.textContent = t(element.dataset.i18n);
  for (const element of document.querySelectorAll('[data-i18n-label]')) {
    element.setAttribute('aria-label', t(element.dataset.i18nLabel));
  }
  const choice = document.getElementById('language');
  choice.replaceChildren(...LANGUAGES.map((code) => {
    const option = new Option(languageName(code), code, false, code === currentLanguage());
    option.lang = code;
    return option;
  }));
}

document.getElementById('language').addEventListener('change', async (event) => {
  chooseLanguage(event.target.value);
  await useLanguage(event.target.value);
  translatePage();
  await route();
});

await loadLanguages();
await useLanguage(preferredLanguage());
translatePage();
window.addEventListener('hashchange', route);
watchTurns();
watchChallenges();
route();
