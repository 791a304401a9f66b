// Challenges (#/challenges, and #/challenges/USERNAME with that player in the form): challenge 1
// to 3 players by username (holes, house rules, rated), the open challenges the account sent and
// received (/v1/account/challenges, loaded again on every challenge event of the account's
// stream), accept, decline, cancel. The challenges this browser sent or accepted are remembered
// until their game is created: the answer that creates it, or the `game_started` of that game,
// takes the page to its table wherever the player is. A challenge received while the page shows
// something else is said by a notice at the top of the page.

import { accountOf, call } from './api.js';
import { announce, h, replace, say, sayError } from './dom.js';
import { formatList, formatTime, t } from './i18n.js';
import { houseRulesFields } from './house-rules.js';
import { rulesText } from './lobby.js';
import { onAccountEvent } from './turns.js';

const AWAITED = 'golf.challenges.awaited';
const CHALLENGE_EVENTS = ['challenge_received', 'challenge_answered', 'game_started'];

const field = (label, input, hint) => h('label', { class: 'field' }, h('span', {}, label), input, hint && h('small', {}, hint));

function awaited() {
  try {
    return JSON.parse(localStorage.getItem(AWAITED)) || [];
  } catch {
    return [];
  }
}

function keepAwaited(ids) {
  localStorage.setItem(AWAITED, JSON.stringify(ids));
}

// Remembers `challenge` (sent or accepted here) until it closes; when it has its game already,
// goes there. Answers whether the page went to the game.
export function awaitGame(challenge) {
  if (challenge.status === 'accepted' && challenge.game_id) {
    keepAwaited(awaited().filter((id) => id !== challenge.id));
    location.hash = `#/game/${challenge.game_id}`;
    return true;
  }
  if (challenge.status === 'open' && !awaited().includes(challenge.id)) keepAwaited([...awaited(), challenge.id]);
  return false;
}

// Follows the account's stream for as long as the page is open: a game started by a remembered
// challenge is opened, a challenge received elsewhere than on #/challenges is said.
export function watchChallenges() {
  onAccountEvent((event) => {
    if (event.type === 'game_started') openStartedGame(event.game_id);
    if (event.type === 'challenge_received' && !location.hash.startsWith('#/challenges')) notice(event);
  }, new AbortController().signal);
}

async function openStartedGame(game) {
  const account = accountOf();
  if (!account) return;
  for (const id of awaited()) {
    try {
      const { body } = await call('GET', `/v1/challenges/${id}`, { token: account.token });
      if (body.status !== 'open') keepAwaited(awaited().filter((kept) => kept !== id));
      if (body.game_id === game) {
        location.hash = `#/game/${game}`;
        return;
      }
    } catch (error) {
      if (error.status === 404) keepAwaited(awaited().filter((kept) => kept !== id));
    }
  }
}

function notice(event) {
  const region = document.getElementById('turns');
  const text = t('challenges.notice', { name: event.from });
  region.append(h('p', { class: 'turn-notice', 'data-challenge': event.challenge_id },
    h('span', {}, text), ' ',
    h('a', { href: '#/challenges' }, t('challenges.notice_open')), ' ',
    h('button', { type: 'button', class: 'link', onclick: () => dismissNotices() }, t('turns.dismiss'))));
  region.hidden = false;
  announce(text);
}

function dismissNotices() {
  const region = document.getElementById('turns');
  for (const element of region.querySelectorAll('[data-challenge]')) element.remove();
  region.hidden = region.childElementCount === 0;
}

export async function showChallenges(main, username, signal) {
  const account = accountOf();
  if (!account) {
    replace(main, h('h1', {}, t('challenges.title')),
      h('p', {}, t('challenges.sign_in'), ' ', h('a', { href: '#/account' }, t('lobby.account_link'))));
    return;
  }
  dismissNotices();
  const received = h('ul', { class: 'games', 'data-testid': 'challenges-received' });
  const sent = h('ul', { class: 'games', 'data-testid': 'challenges-sent' });
  const reload = () => loadChallenges(account, received, sent).catch((error) => sayError(error, t('challenges.failed')));
  replace(main,
    h('h1', {}, t('challenges.title')),
    h('section', { class: 'panel', 'aria-labelledby': 'received-title' },
      h('h2', { id: 'received-title' }, t('challenges.received')), received),
    h('section', { class: 'panel', 'aria-labelledby': 'sent-title' },
      h('h2', { id: 'sent-title' }, t('challenges.sent')), sent),
    h('section', { class: 'panel', 'aria-labelledby': 'challenge-title' },
      h('h2', { id: 'challenge-title' }, t('challenges.new')),
      challengeForm(account, username, reload)));
  onAccountEvent((event) => {
    if (CHALLENGE_EVENTS.includes(event.type)) reload();
  }, signal);
  await reload();
}

async function loadChallenges(account, received, sent) {
  const { body } = await call('GET', '/v1/account/challenges', { token: account.token });
  const mine = (challenge) => challenge.from === account.username;
  replace(received, body.challenges.filter((challenge) => !mine(challenge)).map((challenge) => receivedItem(account, challenge)));
  replace(sent, body.challenges.filter(mine).map((challenge) => sentItem(account, challenge)));
  if (received.childElementCount === 0) received.append(h('li', { class: 'empty' }, t('challenges.none_received')));
  if (sent.childElementCount === 0) sent.append(h('li', { class: 'empty' }, t('challenges.none_sent')));
}

// What a challenge is: its game's holes, rules and whether it is rated, and who said what.
function description(challenge) {
  const answers = challenge.to.map((answer) => t(`challenges.answer.${answer.answer || 'waiting'}`, { name: answer.username }));
  return [
    h('div', {}, `${t('game.holes', { count: challenge.holes })} · ${rulesText(challenge.rules)}`,
      challenge.rated && ` · ${t('challenges.rated')}`),
    h('div', { class: 'muted' }, formatList(answers)),
    h('div', { class: 'muted' }, t('challenges.expires', { time: formatTime(challenge.expires_at, { dateStyle: 'medium', timeStyle: 'short' }) })),
  ];
}

function receivedItem(account, challenge) {
  const mine = challenge.to.find((answer) => answer.username === account.username);
  const answer = (verb) => async (event) => {
    event.target.disabled = true;
    try {
      const { body } = await call('POST', `/v1/challenges/${challenge.id}/${verb}`, { token: account.token });
      if (verb === 'accept' && !awaitGame(body)) say(t('challenges.accepted_waiting'), 'info');
    } catch (error) {
      sayError(error);
      event.target.disabled = false;
    }
  };
  return h('li', { class: 'game-item', 'data-challenge': challenge.id },
    h('div', {}, h('strong', {}, t('challenges.from', { name: challenge.from })), description(challenge)),
    mine && mine.answer === null
      ? h('div', { class: 'actions' },
        h('button', { type: 'button', onclick: answer('accept') }, t('challenges.accept')),
        h('button', { type: 'button', class: 'secondary', onclick: answer('decline') }, t('challenges.decline')))
      : h('span', { class: 'muted' }, t('challenges.you_accepted')));
}

function sentItem(account, challenge) {
  const cancel = async (event) => {
    event.target.disabled = true;
    try {
      await call('DELETE', `/v1/challenges/${challenge.id}`, { token: account.token });
      say(t('challenges.cancelled'), 'info');
    } catch (error) {
      sayError(error);
      event.target.disabled = false;
    }
  };
  return h('li', { class: 'game-item', 'data-challenge': challenge.id },
    h('div', {}, h('strong', {}, t('challenges.to', { names: formatList(challenge.to.map((answer) => answer.username)) })), description(challenge)),
    h('button', { type: 'button', class: 'secondary', onclick: cancel }, t('challenges.cancel')));
}

function challengeForm(account, username, reload) {
  const players = h('input', { name: 'to', required: true, autocomplete: 'off', spellcheck: 'false', value: username || '' });
  const holes = h('input', { name: 'holes', type: 'number', min: 1, max: 18, value: '9', required: true });
  const rated = h('input', { name: 'rated', type: 'checkbox' });
  const house = houseRulesFields();
  const submit = h('button', { type: 'submit' }, t('challenges.send'));
  const form = h('form', { class: 'create' },
    field(t('challenges.players'), players, t('challenges.players_hint')),
    h('div', { class: 'row' },
      field(t('lobby.holes'), holes),
      h('label', { class: 'checkbox' }, rated, ' ', t('challenges.rated_option'))),
    house.fieldset,
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    say('');
    try {
      const to = players.value.split(/[\s,]+/).filter(Boolean).map((name) => name.toLowerCase());
      const { body } = await call('POST', '/v1/challenges', {
        body: { to, holes: Number(holes.value), rules: house.rules(), rated: rated.checked },
        token: account.token,
      });
      awaitGame(body);
      players.value = '';
      say(t('challenges.sent_to', { names: formatList(to) }), 'info');
      await reload();
    } catch (error) {
      sayError(error);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
