// The account's stream (/v1/account/stream), followed while this browser is signed in: every
// event goes to the pages listening (the lobby's "My games"), and a `your_turn` in a game that is
// not on screen is said, by a system notification when the player allowed them (the Notification
// API), else by a notice in the page that links to the game. The id of the last event seen is
// kept, so that a reload resumes after it instead of saying old turns again.

import { accountOf, call, followStream, forgetAccount, keepLastSeenEvent, lastSeenEvent, Problem } from './api.js';
import { announce, h, replace, say } from './dom.js';
import { currentLanguage, formatTime, t } from './i18n.js';

// The most events a page of /v1/account/events holds.
const PAGE = 1000;
// How long to wait before asking again when the server could not be reached.
const RETRY_MS = 5000;

let following = new AbortController();
const listeners = new Set();

// (Re)starts following the stream of the account signed in here, if any; called at start, and
// after signing in or out.
export function watchTurns() {
  following.abort();
  following = new AbortController();
  const account = accountOf();
  if (account) watch(account, following.signal);
}

// The server no longer takes the account's token (it was replaced on another device, say): this
// browser is signed out, and the player told so.
export function accountRefused() {
  forgetAccount();
  watchTurns();
  say(t('account.token_refused'), 'warning');
}

// Calls `listener` with each account event until `signal` aborts (the page is left).
export function onAccountEvent(listener, signal) {
  listeners.add(listener);
  signal.addEventListener('abort', () => listeners.delete(listener));
}

async function watch(account, signal) {
  let after = lastSeenEvent();
  // Signed in just now: what happened before is history, not news.
  while (after === null && !signal.aborted) {
    try {
      after = await latestEventId(account.token);
      keepLastSeenEvent(after);
    } catch (error) {
      if (error instanceof Problem && error.status < 500) {
        trouble(error);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
  if (signal.aborted) return;
  followStream('/v1/account/stream', account.token, after, (event) => {
    keepLastSeenEvent(event.id);
    for (const listener of listeners) listener(event);
    if (event.type === 'your_turn' && !onScreen(event.game_id)) tell(event);
    if (event.type === 'game_ended') dismiss(event.game_id);
  }, signal, trouble);
}

// The id of the account's newest event (0 when it has none), read page after page.
async function latestEventId(token) {
  let after = 0;
  for (;;) {
    const { body } = await call('GET', `/v1/account/events?after=${after}&limit=${PAGE}`, { token });
    if (body.events.length > 0) after = body.events[body.events.length - 1].id;
    if (body.events.length < PAGE) return after;
  }
}

// The stream retries on its own after network trouble; a refused token signs this browser out.
function trouble(error) {
  if (error instanceof Problem && error.status === 401) accountRefused();
}

function onScreen(game) {
  return document.visibilityState === 'visible' && location.hash.toLowerCase() === `#/game/${game}`;
}

function tell(event) {
  const game = event.game_id.slice(0, 8);
  const body = event.turn_deadline
    ? t('turns.body_deadline', { game, time: formatTime(event.turn_deadline) })
    : t('turns.body', { game });
  if (notificationsAllowed()) {
    const note = new Notification(t('turns.title'), { body, tag: event.game_id, lang: currentLanguage() });
    note.addEventListener('click', () => {
      window.focus();
      location.hash = `#/game/${event.game_id}`;
      note.close();
    });
    return;
  }
  notice(event.game_id, body);
}

function notificationsAllowed() {
  return typeof Notification === 'function' && Notification.permission === 'granted';
}

// The in-page notice of a turn: one per game (a newer turn replaces it), until the game is opened,
// ends, or the player dismisses it.
function notice(game, text) {
  const region = document.getElementById('turns');
  dismiss(game);
  region.append(h('p', { class: 'turn-notice', 'data-game': game },
    h('span', {}, text), ' ',
    h('a', { href: `#/game/${game}` }, t('turns.open')), ' ',
    h('button', { type: 'button', class: 'link', onclick: () => dismiss(game) }, t('turns.dismiss'))));
  region.hidden = false;
  announce(text);
}

function dismiss(game) {
  const region = document.getElementById('turns');
  for (const element of region.querySelectorAll('[data-game]')) {
    if (element.dataset.game === game) element.remove();
  }
  region.hidden = region.childElementCount === 0;
}

window.addEventListener('hashchange', () => {
  const [, game] = location.hash.toLowerCase().match(/^#\/game\/([0-9a-f-]+)$/) || [];
  if (game) dismiss(game);
});

// The account page's control of the notifications: what this browser allows, and the button
// that asks (browsers ask only after a click).
export function notificationSetting() {
  const line = h('p', { 'data-testid': 'notifications' });
  const show = () => {
    if (typeof Notification !== 'function') {
      replace(line, t('turns.unsupported'));
    } else if (Notification.permission === 'default') {
      replace(line, t('turns.ask_hint'), ' ',
        h('button', { type: 'button', class: 'secondary', onclick: () => Notification.requestPermission().then(show) }, t('turns.ask')));
    } else {
      replace(line, t(`turns.${Notification.permission}`));
    }
  };
  show();
  return line;
}
