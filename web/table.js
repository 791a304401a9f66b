// The table: the caller's grid, the opponents', the piles, whose turn, the drawn card, the legal
// moves as the only things to click, the scores, and live updates from the game's stream (read
// with fetch and the Authorization header; each entry re-fetches the view with If-None-Match).

import { call, follow, forgetSeat, hostTokenOf, seatOf } from './api.js';
import { cardElement, cardName, gridElement } from './cards.js';
import { h, replace, say } from './dom.js';
import { rulesText, sitDown } from './lobby.js';

const STAGES = {
  reveal: 'everyone turns two cards face up',
  draw: 'draw a card',
  place: 'place the drawn card',
  flip: 'flip a card, or pass',
  hole_over: 'the hole is over',
};

// A stacked game was created with explicit decks: its host knows every card, face down or in the
// stock. Players are told before they sit down and at the table.
function stackedWarning(view) {
  return view.stacked && h('p', { class: 'message warning', role: 'alert', 'data-testid': 'stacked' },
    'Stacked deck: this game was created with explicit decks, so its host knows every card, face down or in the stock. Play it only with someone you trust.');
}

export async function showTable(main, game, signal) {
  const table = new Table(main, game, signal);
  await table.start();
}

class Table {
  constructor(main, game, signal) {
    this.main = main;
    this.game = game;
    this.signal = signal;
    this.view = null;
    this.etag = null;
    this.selected = null;
    this.busy = false;
    this.refreshing = null;
    this.stale = false;
  }

  get seat() {
    return seatOf(this.game);
  }

  async start() {
    const held = this.seat;
    if (!held) {
      const { body } = await call('GET', `/v1/games/${this.game}`);
      if (body.status === 'waiting' && body.players.length < body.seats) {
        this.showJoin(body);
        return;
      }
      this.view = body;
      this.etag = null;
    } else {
      try {
        await this.refresh();
      } catch (error) {
        if (error.status !== 401) throw error;
        forgetSeat(this.game);
        say(`This browser's seat in game ${this.game.slice(0, 8)} is no longer valid: ${error.message}`, 'warning');
        await this.start();
        return;
      }
    }
    this.render();
    if (this.view.status !== 'finished') this.follow();
  }

  showJoin(view) {
    const name = h('input', { name: 'name', required: true, maxlength: 40, value: localStorage.getItem('golf.name') || '' });
    const clientSeed = h('input', { name: 'client_seed', maxlength: 64, autocomplete: 'off' });
    const submit = h('button', { type: 'submit' }, 'Take a seat');
    const form = h('form', { class: 'panel join' },
      h('h2', {}, `Join game ${this.game.slice(0, 8)}`),
      stackedWarning(view),
      h('p', {}, `${view.players.length} of ${view.seats} seats taken · ${view.holes} holes · ${rulesText(view.rules)}`),
      h('p', { class: 'muted' }, `Seated: ${view.players.map((player) => player.name).join(', ') || 'nobody yet'}`),
      h('label', { class: 'field' }, h('span', {}, 'Your name'), name),
      h('label', { class: 'field' }, h('span', {}, 'Your client seed'), clientSeed, h('small', {}, 'optional: your own entropy for the deals')),
      submit);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        await sitDown(this.game, name.value, clientSeed.value);
        say('');
        await this.start();
      } catch (error) {
        say(error.message);
        submit.disabled = false;
      }
    });
    replace(this.main, form);
    name.focus();
  }

  // The caller's view (the public one for a spectator); 304 keeps the one we have.
  async refresh() {
    const held = this.seat;
    const path = held ? `/v1/games/${this.game}/view` : `/v1/games/${this.game}`;
    const headers = this.etag ? { 'If-None-Match': this.etag } : {};
    const answer = await call('GET', path, { token: held && held.token, headers });
    if (answer.status === 200) {
      this.view = answer.body;
      this.etag = answer.etag;
      return true;
    }
    return false;
  }

  // One refresh at a time; entries that arrive meanwhile cause one more.
  async refreshSoon() {
    if (this.refreshing) {
      this.stale = true;
      return;
    }
    this.refreshing = (async () => {
      do {
        this.stale = false;
        try {
          if (await this.refresh()) this.render();
        } catch (error) {
          say(error.message);
        }
      } while (this.stale && !this.signal.aborted);
    })();
    await this.refreshing;
    this.refreshing = null;
  }

  follow() {
    const held = this.seat;
    // The stream of a finished game has nothing more to say: it is closed at its last entry.
    this.stopFollowing = new AbortController();
    this.signal.addEventListener('abort', () => this.stopFollowing.abort());
    follow(this.game, held && held.token, (entry) => {
      if (entry.seq > (this.view ? this.view.version : 0)) this.refreshSoon();
      if (entry.type === 'game_ended') this.stopFollowing.abort();
    }, this.stopFollowing.signal, (error) => say(`The live updates stopped for a moment: ${error.message}`, 'warning'));
  }

  async play(move) {
    if (this.busy) return;
    this.busy = true;
    say('');
    try {
      const answer = await call('POST', `/v1/games/${this.game}/moves`, {
        body: move,
        token: this.seat.token,
        headers: { 'If-Match': `"${this.view.version}"`, 'Idempotency-Key': crypto.randomUUID() },
      });
      this.selected = null;
      if (answer.body.version >= this.view.version) {
        this.view = answer.body;
        this.etag = answer.etag;
      }
    } catch (error) {
      say(error.message);
      this.selected = null;
      await this.refresh().catch(() => {});
    } finally {
      this.busy = false;
      this.render();
    }
  }

  render() {
    const view = this.view;
    const you = typeof view.you === 'number' ? view.you : null;
    const moves = view.legal_moves || [];
    const focused = document.activeElement && document.activeElement.dataset.focusKey;
    const others = view.players.filter((player) => player.seat !== you);
    const mine = view.players.find((player) => player.seat === you);
    replace(this.main,
      h('section', { class: 'status panel', 'aria-live': 'polite', 'data-testid': 'status' }, this.statusLine(view, you)),
      stackedWarning(view),
      view.status === 'waiting' && this.waitingPanel(view),
      h('section', { class: 'board' },
        h('div', { class: 'opponents' }, others.map((player) => this.playerElement(player, view, []))),
        this.pilesElement(view, moves),
        mine && this.playerElement(mine, view, moves),
        this.actionsElement(moves)),
      this.scoresElement(view),
      view.last_hole && this.lastHoleElement(view),
      view.status === 'finished' && h('p', { class: 'panel' },
        h('a', { class: 'button', href: `#/replay/${this.game}`, 'data-testid': 'open-replay' }, 'Replay and check this game')));
    if (focused) {
      const again = this.main.querySelector(`[data-focus-key="${focused}"]`);
      if (again) again.focus();
    }
  }

  statusLine(view, you) {
    const name = (seat) => {
      const player = view.players.find((p) => p.seat === seat);
      return player ? player.name : `seat ${seat + 1}`;
    };
    if (view.status === 'waiting') return `Waiting for players: ${view.players.length} of ${view.seats} seats taken.`;
    if (view.status === 'finished') {
      return `Game over. ${view.winners.length > 1 ? 'Winners' : 'Winner'}: ${view.winners.map(name).join(', ')}.`;
    }
    let turn;
    if (view.stage === 'reveal') {
      const me = view.players.find((p) => p.seat === you);
      turn = me && me.revealed_count < 2 ? 'Turn two of your cards face up.' : 'Waiting for the others to turn two cards face up.';
    } else if (view.current_seat === you) {
      turn = `Your turn: ${STAGES[view.stage]}.`;
    } else if (view.current_seat !== null) {
      turn = `${name(view.current_seat)} to play (${STAGES[view.stage]}).`;
    } else {
      turn = STAGES[view.stage] || '';
    }
    return [h('strong', {}, `Hole ${view.hole} of ${view.holes}`), ` · ${turn}`];
  }

  waitingPanel(view) {
    const link = `${location.origin}/#/game/${view.id}`;
    const input = h('input', { readonly: true, value: link, 'aria-label': 'Invitation link', 'data-testid': 'invitation' });
    const host = hostTokenOf(view.id);
    return h('section', { class: 'panel' },
      h('p', {}, 'Invite players with this link (it names the game only, never a seat):'),
      h('div', { class: 'inline' }, input,
        h('button', { type: 'button', class: 'secondary', onclick: () => this.copy(link, input) }, 'Copy')),
      host && h('div', { class: 'inline' },
        h('button', { type: 'button', class: 'secondary', onclick: () => this.seatBot(host) }, 'Seat a greedy bot'),
        h('button', { type: 'button', class: 'secondary', onclick: () => this.cancel(host) }, 'Cancel the game')));
  }

  // The clipboard exists only in secure contexts (https, or this machine): elsewhere the link is
  // selected for the player to copy.
  copy(link, input) {
    input.select();
    if (navigator.clipboard) navigator.clipboard.writeText(link).then(() => say('Link copied.', 'info'), () => {});
  }

  async seatBot(host) {
    try {
      await call('POST', `/v1/games/${this.game}/players`, { body: { name: 'Bot (greedy)', bot: 'greedy' }, token: host });
      await this.refreshSoon();
    } catch (error) {
      say(error.message);
    }
  }

  async cancel(host) {
    try {
      await call('DELETE', `/v1/games/${this.game}`, { token: host });
      location.hash = '#/';
    } catch (error) {
      say(error.message);
    }
  }

  // A player's grid; on the caller's own, the positions of legal moves are buttons.
  playerElement(player, view, moves) {
    const you = player.seat === view.you;
    const turn = view.current_seat === player.seat;
    const cell = (position) => {
      const code = player.grid[position];
      const action = you ? this.positionAction(position, moves) : null;
      const label = action && `${action.label} (${cardName(code)})`;
      return cardElement(code, {
        action: action && action.run,
        label,
        selected: you && this.selected === position,
      });
    };
    const grid = gridElement(cell, { 'data-testid': you ? 'my-grid' : `grid-${player.seat}` });
    for (const [position, element] of [...grid.children].entries()) element.dataset.focusKey = `${player.seat}-${position}`;
    return h('div', { class: `player${you ? ' you' : ''}${turn ? ' turn' : ''}`, 'data-seat': player.seat },
      h('div', { class: 'name' }, player.name, player.bot ? ` (bot: ${player.bot})` : '', you ? ' — you' : ''),
      grid,
      h('div', { class: 'muted' }, `Total ${player.total}`));
  }

  // What clicking a position of the caller's grid does, if anything is legal there.
  positionAction(position, moves) {
    const swap = moves.find((move) => move.type === 'swap' && move.position === position);
    if (swap) return { label: `Place the drawn card at position ${position + 1}`, run: () => this.play(swap) };
    const flip = moves.find((move) => move.type === 'flip' && move.position === position);
    if (flip) return { label: `Flip position ${position + 1}`, run: () => this.play(flip) };
    const reveals = moves.filter((move) => move.type === 'reveal');
    if (reveals.length === 0) return null;
    if (this.selected === null) {
      if (!reveals.some((move) => move.positions.includes(position))) return null;
      return { label: `Choose position ${position + 1} to turn face up`, run: () => { this.selected = position; this.render(); } };
    }
    if (this.selected === position) {
      return { label: `Unchoose position ${position + 1}`, run: () => { this.selected = null; this.render(); } };
    }
    const pair = reveals.find((move) => move.positions.includes(position) && move.positions.includes(this.selected));
    if (!pair) return null;
    return { label: `Turn positions ${this.selected + 1} and ${position + 1} face up`, run: () => this.play(pair) };
  }

  pilesElement(view, moves) {
    const fromStock = moves.find((move) => move.type === 'draw' && move.source === 'stock');
    const fromDiscard = moves.find((move) => move.type === 'draw' && move.source === 'discard');
    const stock = cardElement(null, {
      action: fromStock && (() => this.play(fromStock)),
      label: fromStock ? 'Draw from the stock' : `The stock: ${view.stock_count} cards`,
    });
    stock.dataset.focusKey = 'stock';
    stock.dataset.testid = 'stock';
    const discard = view.discard_top
      ? cardElement(view.discard_top, {
        action: fromDiscard && (() => this.play(fromDiscard)),
        label: fromDiscard ? `Take the ${cardName(view.discard_top)} from the discard pile` : `Discard pile: ${cardName(view.discard_top)}`,
      })
      : h('div', { class: 'card empty', role: 'img', 'aria-label': 'The discard pile is empty' });
    discard.dataset.focusKey = 'discard';
    const drawn = view.drawn;
    let drawnElement = null;
    if (drawn) {
      const who = drawn.seat === view.you ? 'You drew' : `${view.players[drawn.seat].name} drew`;
      drawnElement = h('div', { class: 'pile drawn', 'data-testid': 'drawn' },
        cardElement(drawn.card), h('div', { class: 'muted' }, `${who} from the ${drawn.source}`));
    }
    return h('div', { class: 'piles' },
      h('div', { class: 'pile' }, stock, h('div', { class: 'muted', 'data-testid': 'stock-count' }, `Stock: ${view.stock_count}`)),
      h('div', { class: 'pile' }, discard, h('div', { class: 'muted' }, `Discard: ${view.discard_count}`)),
      drawnElement);
  }

  actionsElement(moves) {
    const buttons = [];
    const labels = { discard: 'Discard the drawn card', pass: 'Pass (do not flip)' };
    for (const move of moves) {
      if (labels[move.type]) {
        buttons.push(h('button', { type: 'button', 'data-focus-key': move.type, 'data-move': move.type, onclick: () => this.play(move) }, labels[move.type]));
      }
    }
    return buttons.length ? h('div', { class: 'actions' }, buttons) : null;
  }

  scoresElement(view) {
    const holes = Array.from({ length: view.holes }, (_, i) => i + 1);
    return h('section', { class: 'panel scores' },
      h('h2', {}, 'Scores'),
      h('div', { class: 'scroll' },
        h('table', { 'data-testid': 'scores' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Player'), holes.map((hole) => h('th', { scope: 'col' }, String(hole))), h('th', { scope: 'col' }, 'Total'))),
          h('tbody', {}, view.players.map((player) => h('tr', { 'data-seat': player.seat },
            h('th', { scope: 'row' }, player.name),
            holes.map((hole) => h('td', { 'data-hole': hole }, player.hole_scores[hole - 1] === undefined ? '' : String(player.hole_scores[hole - 1]))),
            h('td', { 'data-total': '' }, String(player.total))))))));
  }

  lastHoleElement(view) {
    const last = view.last_hole;
    return h('section', { class: 'panel last-hole', 'data-testid': 'last-hole' },
      h('h2', {}, `Hole ${last.hole}: ${last.reason === 'grid_complete' ? 'a grid was complete' : 'the turn cap was reached'}`),
      h('div', { class: 'opponents' }, last.grids.map((grid, seat) => h('div', { class: 'player small' },
        h('div', { class: 'name' }, view.players[seat].name),
        gridElement((position) => cardElement(grid[position])),
        h('div', {}, `Score ${last.scores[seat]}`)))));
  }
}
