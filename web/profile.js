// A player's public profile (#/player/USERNAME, from /v1/accounts/{username}): the display name,
// the games played and won, the rating and its history (ratings.js), a link to challenge the player
// when signed in as someone else, the last finished games; and the line of a game as an account's lists
// show it (a GameSummary), which "My games" shares.

import { accountOf, call } from './api.js';
import { h, replace } from './dom.js';
import { formatNumber, formatTime, t } from './i18n.js';
import { ratingPanel } from './ratings.js';

// A username as the API takes one: anything else in a link goes into no API path.
export const USERNAME = /^[a-z][a-z0-9_-]{2,23}$/;

export async function showProfile(main, username) {
  const { body } = await call('GET', `/v1/accounts/${encodeURIComponent(username)}`);
  const account = accountOf();
  replace(main,
    h('h1', {}, body.display_name),
    h('section', { class: 'panel', 'data-testid': 'profile' },
      h('p', {}, t('profile.username', { username: body.username })),
      h('p', {}, t('account.played', { count: body.games.played }), ' · ', t('account.won', { count: body.games.won })),
      account && account.username !== body.username && !body.username.startsWith('bot-')
        && h('p', {}, h('a', { class: 'button', href: `#/challenges/${body.username}` }, t('profile.challenge', { name: body.display_name })))),
    await ratingPanel(body.username, body.rating),
    h('section', { class: 'panel', 'aria-labelledby': 'recent-title' },
      h('h2', { id: 'recent-title' }, t('profile.recent')),
      body.recent.length > 0
        ? h('ul', { class: 'games' }, body.recent.map((game) => summaryItem(game)))
        : h('p', { class: 'muted' }, t('profile.no_games'))));
}

// A game of an account's list: where it stands (whose turn, and until when), its players with
// their totals (those with an account linked to their profile), and the way to it: its table for
// the account's own games, its replay on a profile.
export function summaryItem(game, { own = false } = {}) {
  const link = own
    ? h('a', { class: 'button', href: `#/game/${game.id}` }, t(game.your_turn ? 'summary.play' : 'summary.open'))
    : h('a', { class: 'button', href: `#/replay/${game.id}` }, t('summary.replay'));
  return h('li', { class: `game-item${own && game.your_turn ? ' your-turn' : ''}`, 'data-game': game.id, 'data-your-turn': String(own && game.your_turn) },
    h('div', {},
      h('strong', {}, stateText(game, own)),
      ` · ${t('game.holes', { count: game.holes })}`,
      deadlineText(game),
      h('div', { class: 'muted' }, t('summary.players'), ' ', playersLine(game)),
      h('div', { class: 'muted' }, t('summary.updated', { time: formatTime(game.updated_at, { dateStyle: 'medium', timeStyle: 'short' }) }))),
    link);
}

function stateText(game, own) {
  if (game.status === 'waiting') return t('game.seats_taken', { taken: game.players.length, count: game.seats });
  if (game.status === 'finished') return t('summary.finished', { names: winnerNames(game) });
  if (!own) return t('summary.playing');
  return t(game.your_turn ? 'summary.your_turn' : 'summary.their_turn');
}

function deadlineText(game) {
  if (game.status !== 'playing') return null;
  return game.turn_deadline
    ? h('span', { 'data-testid': 'deadline' }, ` · ${t('summary.deadline', { time: formatTime(game.turn_deadline, { dateStyle: 'medium', timeStyle: 'short' }) })}`)
    : ` · ${t('summary.no_deadline')}`;
}

function winnerNames(game) {
  const winners = game.winners || [];
  return game.players.filter((player) => winners.includes(player.seat)).map((player) => player.name).join(', ');
}

function playersLine(game) {
  return game.players.map((player, index) => [
    index > 0 ? ', ' : '',
    player.account ? h('a', { href: `#/player/${player.account}` }, player.name) : player.name,
    ` (${formatNumber(player.total)})`,
  ]);
}
