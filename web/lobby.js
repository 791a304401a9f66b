// The lobby: the account's games (my-games.js) and a quick game (seeks.js) when this browser is
// signed in, create a game
// (with bots seated by the host token, house rules from house-rules.js, the time each player has
// to play, and rated when signed in), as the account when signed in, the open games, the other
// games this browser holds a seat in, and the ways to a replay.

import { accountOf, call, keepHostToken, keepSeat, myGames } from './api.js';
import { h, replace, say, sayError } from './dom.js';
import { houseRulesFields } from './house-rules.js';
import { formatDuration, t } from './i18n.js';
import { myGamesPanel } from './my-games.js';
import { quickGamePanel } from './seeks.js';
import { shapeOf } from './scoring.js';

// The times to play a create form offers, in seconds (docs/RULES.md, `turn_timeout_s`): a live
// game's to a week's.
const TURN_TIMEOUTS = [300, 3600, 86400, 259200, 604800];

const field = (label, input, hint) => h('label', { class: 'field' }, h('span', {}, label), input, hint && h('small', {}, hint));

function options(values, selected) {
  return values.map(([value, text]) => h('option', { value, selected: value === selected ? true : null }, text));
}

export async function showLobby(main, navigate, signal) {
  const list = h('ul', { class: 'games', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, t('lobby.more_games'));
  const account = accountOf();
  // The seats the account took are in its own list.
  const mine = myGames().filter((game) => !account || game.account !== account.username);
  replace(main,
    h('h1', {}, t('lobby.title')),
    account && myGamesPanel(signal),
    account && quickGamePanel(account, signal),
    h('section', { class: 'panel', 'aria-labelledby': 'create-title' },
      h('h2', { id: 'create-title' }, t('lobby.new_game')),
      account
        ? h('p', {}, t('lobby.as_account', { username: account.username }))
        : h('p', { class: 'muted' }, t('lobby.account_hint'), ' ', h('a', { href: '#/account' }, t('lobby.account_link'))),
      createForm(navigate, account)),
    h('section', { class: 'panel', 'aria-labelledby': 'open-title' },
      h('h2', { id: 'open-title' }, t('lobby.open_games')),
      list, more),
    mine.length > 0 && h('section', { class: 'panel', 'aria-labelledby': 'mine-title' },
      h('h2', { id: 'mine-title' }, t('lobby.your_seats')),
      h('ul', { class: 'games' }, mine.map((game) => h('li', {},
        h('a', { href: `#/game/${game.id}` }, t('lobby.game', { id: game.id.slice(0, 8) })),
        ' ', t('lobby.seated_as', { name: game.name, seat: game.seat + 1 }))))),
    h('section', { class: 'panel', 'aria-labelledby': 'replay-title' },
      h('h2', { id: 'replay-title' }, t('lobby.replay_title')),
      replayForm(navigate),
      h('p', {}, h('a', { href: '#/check' }, t('lobby.check_file'))),
    ));
  await listGames(list, more, null);
}

async function listGames(list, more, cursor) {
  try {
    const query = new URLSearchParams({ status: 'waiting', limit: '20' });
    if (cursor) query.set('cursor', cursor);
    const { body } = await call('GET', `/v1/games?${query}`);
    if (!cursor) list.replaceChildren();
    if (body.games.length === 0 && !cursor) list.append(h('li', { class: 'empty' }, t('lobby.no_open_game')));
    for (const game of body.games) list.append(gameItem(game));
    more.hidden = !body.next_cursor;
    more.onclick = () => listGames(list, more, body.next_cursor);
  } catch (error) {
    sayError(error, t('lobby.list_failed'));
  }
}

function gameItem(game) {
  return h('li', { class: 'game-item', 'data-game': game.id },
    h('div', {},
      h('strong', {}, seatsTaken(game)),
      ` · ${t('game.holes', { count: game.holes })} · ${rulesText(game.rules)}`,
      h('div', { class: 'muted' }, t('lobby.players', { names: playerNames(game) }))),
    h('a', { class: 'button', href: `#/game/${game.id}`, 'aria-label': t('lobby.join_label', { names: playerNames(game) }) }, t('lobby.join')));
}

export function seatsTaken(game) {
  return t('game.seats_taken', { taken: game.players.length, count: game.seats });
}

export function playerNames(game) {
  return game.players.map((player) => player.name).join(', ') || t('game.nobody_yet');
}

// The options of a game in a few words, for the lobby's list and the join form.
export function rulesText(rules) {
  const parts = [];
  if (rules.grid && rules.grid !== '2x3') {
    const shape = shapeOf(rules.grid);
    parts.push(t('rules.short.grid', { count: shape.rows * shape.columns }));
  }
  if (rules.jokers) parts.push(t('rules.short.jokers'));
  if (rules.knock) parts.push(t('rules.short.knock'));
  if (rules.final_turns) parts.push(t('rules.short.final_turns'));
  if (rules.flip_after_discard !== 'never') parts.push(t(`rules.short.flip_${rules.flip_after_discard}`));
  parts.push(t('rules.short.max_turns', { count: rules.max_turns_per_hole }));
  return parts.join(', ');
}

function createForm(navigate, account) {
  const name = nameInput(account);
  const clientSeed = h('input', { name: 'client_seed', maxlength: 64, autocomplete: 'off' });
  const seats = h('select', { name: 'seats' }, options([['2', '2'], ['3', '3'], ['4', '4']], '4'));
  const bots = h('select', { name: 'bots' });
  const strategy = h('select', { name: 'strategy' }, options([['greedy', t('bot.greedy')], ['expert', t('bot.expert')], ['random', t('bot.random')]], 'greedy'));
  const holes = h('input', { name: 'holes', type: 'number', min: 1, max: 18, value: '9', required: true });
  const finalTurns = h('input', { name: 'final_turns', type: 'checkbox' });
  const flip = h('select', { name: 'flip_after_discard' },
    options(['never', 'optional', 'always'].map((value) => [value, t(`rules.flip.${value}`)]), 'never'));
  const maxTurns = h('input', { name: 'max_turns_per_hole', type: 'number', min: 2, max: 800, placeholder: t('lobby.turn_cap_placeholder') });
  const turnTimeout = h('select', { name: 'turn_timeout_s' },
    options([['', t('lobby.turn_timeout_default')], ['none', t('lobby.turn_timeout_none')],
      ...TURN_TIMEOUTS.map((seconds) => [String(seconds), formatDuration(seconds)])], ''));
  const privateGame = h('input', { name: 'private', type: 'checkbox' });
  // Only accounts and the built-in bots sit at a rated game.
  const rated = account && h('input', { name: 'rated', type: 'checkbox' });
  const house = houseRulesFields();
  const fillBots = () => {
    const count = Number(seats.value);
    const kept = Math.min(Number(bots.value || count - 1), count - 1);
    replace(bots, options(Array.from({ length: count }, (_, i) => [String(i), String(i)]), String(kept)));
  };
  seats.addEventListener('change', fillBots);
  fillBots();
  const submit = h('button', { type: 'submit' }, t('lobby.create'));
  const form = h('form', { class: 'create' },
    field(t('form.name'), name),
    field(t('form.client_seed'), clientSeed, t('form.client_seed_hint')),
    h('div', { class: 'row' }, field(t('lobby.seats'), seats), field(t('lobby.bots'), bots), field(t('lobby.bot_strategy'), strategy)),
    h('div', { class: 'row' }, field(t('lobby.holes'), holes), field(t('rules.flip_after_discard'), flip), field(t('lobby.turn_cap'), maxTurns)),
    field(t('rules.turn_timeout'), turnTimeout, t('lobby.turn_timeout_hint')),
    h('div', { class: 'row' },
      h('label', { class: 'checkbox' }, finalTurns, ' ', t('lobby.final_turns')),
      h('label', { class: 'checkbox' }, privateGame, ' ', t('lobby.private')),
      rated && h('label', { class: 'checkbox' }, rated, ' ', t('lobby.rated'))),
    house.fieldset,
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    say('');
    try {
      const rules = { final_turns: finalTurns.checked, flip_after_discard: flip.value, ...house.rules() };
      if (maxTurns.value) rules.max_turns_per_hole = Number(maxTurns.value);
      if (turnTimeout.value) rules.turn_timeout_s = turnTimeout.value === 'none' ? null : Number(turnTimeout.value);
      const created = await call('POST', '/v1/games', {
        body: { seats: Number(seats.value), holes: Number(holes.value), rules, private: privateGame.checked, rated: Boolean(rated && rated.checked) },
        headers: { 'Idempotency-Key': crypto.randomUUID() },
        token: account && account.token,
      });
      const game = created.body.id;
      keepHostToken(game, created.body.host_token);
      await sitDown(game, name.value, clientSeed.value, account);
      for (let i = 1; i <= Number(bots.value); i += 1) {
        await call('POST', `/v1/games/${game}/players`, {
          body: { name: t('bot.name', { number: i }), bot: strategy.value },
          token: created.body.host_token,
        });
      }
      navigate(`#/game/${game}`);
    } catch (error) {
      sayError(error);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// The name to sit down under: the last one used here; signed in, the account's display name,
// which an empty field also stands for.
export function nameInput(account) {
  return account
    ? h('input', { name: 'name', maxlength: 40, autocomplete: 'nickname', value: account.display_name || '', placeholder: account.display_name || account.username })
    : h('input', { name: 'name', required: true, maxlength: 40, autocomplete: 'nickname', value: localStorage.getItem('golf.name') || '' });
}

// Takes a seat (bound to `account` when signed in) and keeps its token in this browser.
export async function sitDown(game, name, clientSeed, account) {
  const body = {};
  if (name.trim() || !account) body.name = name;
  if (clientSeed) body.client_seed = clientSeed;
  const joined = await call('POST', `/v1/games/${game}/players`, { body, token: account && account.token });
  if (body.name) localStorage.setItem('golf.name', name);
  keepSeat(game, {
    seat: joined.body.seat,
    token: joined.body.token,
    name: name.trim() || account.display_name || account.username,
    joinedAt: Date.now(),
    account: account ? account.username : undefined,
  });
  return joined.body;
}

function replayForm(navigate) {
  const id = h('input', { name: 'game', required: true, placeholder: t('lobby.game_id_placeholder'), autocomplete: 'off' });
  const form = h('form', { class: 'inline' }, field(t('lobby.game_id'), id), h('button', { type: 'submit' }, t('lobby.open_replay')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (id.value.trim()) navigate(`#/replay/${id.value.trim()}`);
  });
  return form;
}
