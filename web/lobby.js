// The lobby: create a game (with bots seated by the host token), the open games, the games this
// browser holds a seat in, and the ways to a replay.

import { call, keepHostToken, keepSeat, myGames } from './api.js';
import { h, replace, say } from './dom.js';

const field = (label, input, hint) => h('label', { class: 'field' }, h('span', {}, label), input, hint && h('small', {}, hint));

function options(values, selected) {
  return values.map(([value, text]) => h('option', { value, selected: value === selected ? true : null }, text));
}

export async function showLobby(main, navigate) {
  const list = h('ul', { class: 'games', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More games');
  const mine = myGames();
  replace(main,
    h('section', { class: 'panel', 'aria-labelledby': 'create-title' },
      h('h2', { id: 'create-title' }, 'New game'),
      createForm(navigate)),
    h('section', { class: 'panel', 'aria-labelledby': 'open-title' },
      h('h2', { id: 'open-title' }, 'Open games'),
      list, more),
    mine.length > 0 && h('section', { class: 'panel', 'aria-labelledby': 'mine-title' },
      h('h2', { id: 'mine-title' }, 'Your seats'),
      h('ul', { class: 'games' }, mine.map((game) => h('li', {},
        h('a', { href: `#/game/${game.id}` }, `Game ${game.id.slice(0, 8)}`),
        ` as ${game.name} (seat ${game.seat + 1})`)))),
    h('section', { class: 'panel', 'aria-labelledby': 'replay-title' },
      h('h2', { id: 'replay-title' }, 'Replay and check a finished game'),
      replayForm(navigate),
      h('p', {}, h('a', { href: '#/check' }, 'Check an exported log file (NDJSON) from your disk')),
    ));
  await listGames(list, more, null);
}

async function listGames(list, more, cursor) {
  try {
    const query = new URLSearchParams({ status: 'waiting', limit: '20' });
    if (cursor) query.set('cursor', cursor);
    const { body } = await call('GET', `/v1/games?${query}`);
    if (!cursor) list.replaceChildren();
    if (body.games.length === 0 && !cursor) list.append(h('li', { class: 'empty' }, 'No game is waiting for players: create one.'));
    for (const game of body.games) list.append(gameItem(game));
    more.hidden = !body.next_cursor;
    more.onclick = () => listGames(list, more, body.next_cursor);
  } catch (error) {
    say(`Could not load the open games: ${error.message}`);
  }
}

function gameItem(game) {
  const names = game.players.map((player) => player.name).join(', ') || 'nobody yet';
  return h('li', { class: 'game-item', 'data-game': game.id },
    h('div', {},
      h('strong', {}, `${game.players.length} of ${game.seats} seats taken`),
      ` · ${game.holes} hole${game.holes === 1 ? '' : 's'} · ${rulesText(game.rules)}`,
      h('div', { class: 'muted' }, `Players: ${names}`)),
    h('a', { class: 'button', href: `#/game/${game.id}` }, 'Join'));
}

export function rulesText(rules) {
  const parts = [];
  if (rules.final_turns) parts.push('final turns');
  if (rules.flip_after_discard !== 'never') parts.push(`flip after discard: ${rules.flip_after_discard}`);
  parts.push(`at most ${rules.max_turns_per_hole} turns a hole`);
  return parts.join(', ');
}

function createForm(navigate) {
  const name = h('input', { name: 'name', required: true, maxlength: 40, autocomplete: 'nickname', value: localStorage.getItem('golf.name') || '' });
  const clientSeed = h('input', { name: 'client_seed', maxlength: 64, autocomplete: 'off' });
  const seats = h('select', { name: 'seats' }, options([['2', '2'], ['3', '3'], ['4', '4']], '4'));
  const bots = h('select', { name: 'bots' });
  const strategy = h('select', { name: 'strategy' }, options([['greedy', 'greedy'], ['random', 'random']], 'greedy'));
  const holes = h('input', { name: 'holes', type: 'number', min: 1, max: 18, value: '9', required: true });
  const finalTurns = h('input', { name: 'final_turns', type: 'checkbox' });
  const flip = h('select', { name: 'flip_after_discard' },
    options([['never', 'never'], ['optional', 'optional'], ['always', 'always']], 'never'));
  const maxTurns = h('input', { name: 'max_turns_per_hole', type: 'number', min: 2, max: 800, placeholder: '50 × seats' });
  const privateGame = h('input', { name: 'private', type: 'checkbox' });
  const fillBots = () => {
    const count = Number(seats.value);
    const kept = Math.min(Number(bots.value || count - 1), count - 1);
    replace(bots, options(Array.from({ length: count }, (_, i) => [String(i), String(i)]), String(kept)));
  };
  seats.addEventListener('change', fillBots);
  fillBots();
  const submit = h('button', { type: 'submit' }, 'Create and sit down');
  const form = h('form', { class: 'create' },
    field('Your name', name),
    field('Your client seed', clientSeed, 'optional: your own entropy for the deals'),
    h('div', { class: 'row' }, field('Seats', seats), field('Bots', bots), field('Bot strategy', strategy)),
    h('div', { class: 'row' }, field('Holes', holes), field('Flip after discard', flip), field('Turn cap per hole', maxTurns)),
    h('div', { class: 'row' },
      h('label', { class: 'checkbox' }, finalTurns, ' Final turns after a grid is complete'),
      h('label', { class: 'checkbox' }, privateGame, ' Private (not listed in the lobby)')),
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    say('');
    try {
      const rules = { final_turns: finalTurns.checked, flip_after_discard: flip.value };
      if (maxTurns.value) rules.max_turns_per_hole = Number(maxTurns.value);
      const created = await call('POST', '/v1/games', {
        body: { seats: Number(seats.value), holes: Number(holes.value), rules, private: privateGame.checked },
        headers: { 'Idempotency-Key': crypto.randomUUID() },
      });
      const game = created.body.id;
      keepHostToken(game, created.body.host_token);
      await sitDown(game, name.value, clientSeed.value);
      for (let i = 1; i <= Number(bots.value); i += 1) {
        await call('POST', `/v1/games/${game}/players`, {
          body: { name: `Bot ${i}`, bot: strategy.value },
          token: created.body.host_token,
        });
      }
      navigate(`#/game/${game}`);
    } catch (error) {
      say(error.message);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// Takes a seat and keeps its token in this browser.
export async function sitDown(game, name, clientSeed) {
  const body = { name };
  if (clientSeed) body.client_seed = clientSeed;
  const joined = await call('POST', `/v1/games/${game}/players`, { body });
  localStorage.setItem('golf.name', name);
  keepSeat(game, { seat: joined.body.seat, token: joined.body.token, name: name.trim(), joinedAt: Date.now() });
  return joined.body;
}

function replayForm(navigate) {
  const id = h('input', { name: 'game', required: true, placeholder: 'game id', autocomplete: 'off' });
  const form = h('form', { class: 'inline' }, field('Game', id), h('button', { type: 'submit' }, 'Open the replay'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (id.value.trim()) navigate(`#/replay/${id.value.trim()}`);
  });
  return form;
}
