// The table: the caller's grid, the opponents' (of the view's grid_shape), the piles, whose turn,
// the drawn card, the legal moves as the only things to click (or Tab to and press), a knock
// when the rules allow it, the game's options, the scores, and live updates from the game's
// stream (read with fetch and the Authorization header; each entry re-fetches the view with
// If-None-Match, and what the others did, or a knock, is announced). A seat this browser holds no
// token of is played with the account's token when the account signed in here holds it (taken on
// another device), and a player signed in joins as the account. A finished table where the
// account sat offers a rematch.

import { accountOf, call, follow, forgetSeat, hostTokenOf, seatOf } from './api.js';
import { announceEntry } from './announce.js';
import { cardElement, cardName, gridElement } from './cards.js';
import { awaitGame } from './challenges.js';
import { announce, h, replace, say, sayError } from './dom.js';
import { rulesPanel } from './help.js';
import { formatList, formatNumber, formatTime, t } from './i18n.js';
import { nameInput, playerNames, rulesText, seatsTaken, sitDown } from './lobby.js';

// The most seats a game has.
const MAX_SEATS = 4;

// A stacked game was created with explicit decks: its host knows every card, face down or in the
// stock. Players are told before they sit down and at the table.
function stackedWarning(view) {
  return view.stacked && h('p', { class: 'message warning', role: 'alert', 'data-testid': 'stacked' }, t('table.stacked'));
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
    // The positions chosen so far for the initial reveal.
    this.chosen = [];
    this.busy = false;
    this.refreshing = null;
    this.stale = false;
    this.announced = 0;
    this.lastStatus = null;
    this.accountSeat = null;
  }

  get seat() {
    return seatOf(this.game) || this.accountSeat;
  }

  async start() {
    if (!seatOf(this.game)) this.accountSeat = await this.seatOfAccount();
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
        say(t('table.seat_lost', { game: this.game.slice(0, 8), detail: error.message }), 'warning');
        await this.start();
        return;
      }
    }
    this.announced = this.view.version;
    this.render();
    if (this.view.status !== 'finished') this.follow();
  }

  // The seat the account signed in here holds in this game (taken on another device), played with
  // the account's token; null when it holds none. The seats are taken first, in order, so their
  // `player_joined` entries follow `game_created` at the head of the log, which names the account.
  async seatOfAccount() {
    const account = accountOf();
    if (!account) return null;
    const { body } = await call('GET', `/v1/games/${this.game}/events?limit=${1 + MAX_SEATS}`);
    const joined = body.events.find((entry) => entry.type === 'player_joined' && entry.data.account === account.username);
    return joined ? { seat: joined.data.seat, token: account.token, name: joined.data.name, account: account.username } : null;
  }

  showJoin(view) {
    const account = accountOf();
    const name = nameInput(account);
    const clientSeed = h('input', { name: 'client_seed', maxlength: 64, autocomplete: 'off' });
    const submit = h('button', { type: 'submit' }, t('table.take_seat'));
    const form = h('form', { class: 'panel join' },
      h('h1', {}, t('table.join_title', { game: this.game.slice(0, 8) })),
      stackedWarning(view),
      h('p', {}, `${seatsTaken(view)} · ${t('game.holes', { count: view.holes })} · ${rulesText(view.rules)}`),
      h('p', { class: 'muted' }, t('table.seated', { names: playerNames(view) })),
      account && h('p', {}, t('table.join_as_account', { username: account.username })),
      h('label', { class: 'field' }, h('span', {}, t('form.name')), name),
      h('label', { class: 'field' }, h('span', {}, t('form.client_seed')), clientSeed, h('small', {}, t('form.client_seed_hint'))),
      h('p', {}, h('a', { href: `#/help/${this.game}` }, t('table.how_to_play'))),
      submit);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        await sitDown(this.game, name.value, clientSeed.value, account);
        say('');
        await this.start();
      } catch (error) {
        sayError(error);
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
          sayError(error);
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
      if (entry.seq > this.announced) {
        this.announced = entry.seq;
        if (entry.data.seat !== this.view.you || entry.type === 'knocked') announceEntry(entry, this.view);
      }
      if (entry.seq > (this.view ? this.view.version : 0)) this.refreshSoon();
      if (entry.type === 'game_ended') this.stopFollowing.abort();
    }, this.stopFollowing.signal, (error) => sayError(error, t('table.stream_trouble')));
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
      this.chosen = [];
      if (answer.body.version >= this.view.version) {
        this.view = answer.body;
        this.etag = answer.etag;
      }
    } catch (error) {
      sayError(error);
      this.chosen = [];
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
    const active = document.activeElement;
    const focused = active && active.dataset.focusKey;
    const hadFocus = this.main.contains(active) && active !== this.main;
    const others = view.players.filter((player) => player.seat !== you);
    const mine = view.players.find((player) => player.seat === you);
    const status = h('section', { class: 'status panel', 'data-testid': 'status', tabindex: '-1' }, this.statusLine(view, you));
    replace(this.main,
      h('h1', { class: 'visually-hidden' }, t('table.title', { game: this.game.slice(0, 8) })),
      status,
      stackedWarning(view),
      view.status === 'waiting' && this.waitingPanel(view),
      h('section', { class: 'board' },
        h('div', { class: 'opponents' }, others.map((player) => this.playerElement(player, view, []))),
        this.pilesElement(view, moves),
        mine && this.playerElement(mine, view, moves),
        this.actionsElement(moves)),
      this.scoresElement(view),
      view.last_hole && this.lastHoleElement(view),
      view.status === 'finished' && h('p', { class: 'panel actions' },
        h('a', { class: 'button', href: `#/replay/${this.game}`, 'data-testid': 'open-replay' }, t('table.open_replay')),
        this.rematchButton()),
      rulesPanel(view, this.game));
    this.announceStatus(status.textContent);
    if (hadFocus) this.restoreFocus(focused, status);
  }

  // A finished game where the account signed in here sat can be played again: the others are
  // challenged to the same game (a game with only bots besides starts at once).
  rematchButton() {
    const account = accountOf();
    const held = this.seat;
    if (!account || !held || held.account !== account.username) return null;
    const rematch = async (event) => {
      event.target.disabled = true;
      try {
        const { body } = await call('POST', `/v1/games/${this.game}/rematch`, { token: account.token });
        if (!awaitGame(body)) say(t('table.rematch_sent', { names: formatList(body.to.map((answer) => answer.username)) }), 'info');
      } catch (error) {
        sayError(error);
        event.target.disabled = false;
      }
    };
    return h('button', { type: 'button', onclick: rematch, 'data-testid': 'rematch' }, t('table.rematch'));
  }

  // Focus stays on the same card or button across renders; when it is gone (the move was made),
  // it goes to the first move now possible, else to the status line, never back to the page's top.
  restoreFocus(focused, status) {
    const again = focused && this.main.querySelector(`[data-focus-key="${focused}"]`);
    const next = again || this.main.querySelector('.board button') || status;
    next.focus();
  }

  // Whose turn it is, said once each time it changes.
  announceStatus(text) {
    if (text !== this.lastStatus) announce(text);
    this.lastStatus = text;
  }

  statusLine(view, you) {
    const name = (seat) => {
      const player = view.players.find((p) => p.seat === seat);
      return player ? player.name : t('table.seat', { seat: seat + 1 });
    };
    if (view.status === 'waiting') return t('status.waiting', { taken: view.players.length, count: view.seats });
    if (view.status === 'finished') {
      return t('status.game_over', { count: view.winners.length, names: view.winners.map(name).join(', ') });
    }
    let turn;
    const count = view.rules.initial_reveal ?? 2;
    if (view.stage === 'reveal') {
      const me = view.players.find((p) => p.seat === you);
      turn = me && me.revealed_count < count ? t('status.reveal_yours', { count }) : t('status.reveal_others', { count });
    } else if (view.current_seat === you) {
      turn = t(`status.yours.${view.stage}`, { count });
    } else if (view.current_seat !== null) {
      turn = t(`status.theirs.${view.stage}`, { name: name(view.current_seat), count });
    } else {
      turn = t('status.hole_over');
    }
    const knocked = view.knocked !== undefined && view.current_seat !== null
      && ` ${t('status.knocked', { name: name(view.knocked) })}`;
    const deadline = view.turn_deadline
      && ` ${t('status.deadline', { time: formatTime(view.turn_deadline, { timeStyle: 'medium' }) })}`;
    return [h('strong', {}, t('status.hole', { hole: view.hole, count: view.holes })), ` · ${turn}`, knocked, deadline];
  }

  waitingPanel(view) {
    const link = `${location.origin}/#/game/${view.id}`;
    const input = h('input', { readonly: true, value: link, 'aria-label': t('table.invitation_link'), 'data-testid': 'invitation' });
    const host = hostTokenOf(view.id);
    return h('section', { class: 'panel' },
      h('p', {}, t('table.invite')),
      h('div', { class: 'inline' }, input,
        h('button', { type: 'button', class: 'secondary', onclick: () => this.copy(link, input) }, t('table.copy'))),
      host && h('div', { class: 'inline' },
        h('button', { type: 'button', class: 'secondary', onclick: () => this.seatBot(host) }, t('table.seat_bot')),
        h('button', { type: 'button', class: 'secondary', onclick: () => this.cancel(host) }, t('table.cancel'))));
  }

  // The clipboard exists only in secure contexts (https, or this machine): elsewhere the link is
  // selected for the player to copy.
  copy(link, input) {
    input.select();
    if (navigator.clipboard) navigator.clipboard.writeText(link).then(() => say(t('table.copied'), 'info'), () => {});
  }

  async seatBot(host) {
    try {
      const name = t('bot.name', { number: (this.view?.players.length ?? 0) + 1 });
      await call('POST', `/v1/games/${this.game}/players`, { body: { name, bot: 'greedy' }, token: host });
      await this.refreshSoon();
    } catch (error) {
      sayError(error);
    }
  }

  async cancel(host) {
    try {
      await call('DELETE', `/v1/games/${this.game}`, { token: host });
      location.hash = '#/';
    } catch (error) {
      sayError(error);
    }
  }

  // A player's grid; on the caller's own, the positions of legal moves are buttons.
  playerElement(player, view, moves) {
    const you = player.seat === view.you;
    const turn = view.current_seat === player.seat;
    const cell = (position) => {
      const code = player.grid[position];
      const action = you ? this.positionAction(position, moves) : null;
      const label = action && t('table.card_action', { action: action.label, card: cardName(code) });
      return cardElement(code, {
        action: action && action.run,
        label,
        selected: you && this.chosen.includes(position),
      });
    };
    const grid = gridElement(cell, view.grid_shape, { 'data-testid': you ? 'my-grid' : `grid-${player.seat}` });
    for (const [position, element] of [...grid.children].entries()) element.dataset.focusKey = `${player.seat}-${position}`;
    const heading = `player-${player.seat}-name`;
    return h('section', { class: `player${you ? ' you' : ''}${turn ? ' turn' : ''}`, 'data-seat': player.seat, 'aria-labelledby': heading },
      h('h2', { class: 'name', id: heading }, player.name,
        player.bot ? ` ${t('table.bot_suffix', { bot: t(`bot.${player.bot}`) })}` : '',
        you ? ` ${t('table.you_suffix')}` : '', turn ? ` ${t('table.to_play_suffix')}` : '',
        view.knocked === player.seat ? ` ${t('table.knocked_suffix')}` : ''),
      grid,
      h('div', { class: 'muted' }, t('table.total', { total: player.total })));
  }

  // What clicking a position of the caller's grid does, if anything is legal there.
  positionAction(position, moves) {
    const swap = moves.find((move) => move.type === 'swap' && move.position === position);
    if (swap) return { label: t('move.swap', { position: position + 1 }), run: () => this.play(swap) };
    const flip = moves.find((move) => move.type === 'flip' && move.position === position);
    if (flip) return { label: t('move.flip', { position: position + 1 }), run: () => this.play(flip) };
    return this.revealAction(position, moves.filter((move) => move.type === 'reveal'));
  }

  // The initial reveal of as many positions as the rules say: each position clicked is chosen (or
  // unchosen), and the one that completes the set makes the move.
  revealAction(position, reveals) {
    if (reveals.length === 0) return null;
    if (this.chosen.includes(position)) {
      const unchoose = () => { this.chosen = this.chosen.filter((p) => p !== position); this.render(); };
      return { label: t('move.unchoose', { position: position + 1 }), run: unchoose };
    }
    const wanted = [...this.chosen, position];
    const fits = reveals.filter((move) => wanted.every((p) => move.positions.includes(p)));
    if (fits.length === 0) return null;
    if (wanted.length < reveals[0].positions.length) {
      return { label: t('move.choose', { position: position + 1 }), run: () => { this.chosen = wanted; this.render(); } };
    }
    const positions = formatList(wanted.map((p) => String(p + 1)));
    return { label: t('move.reveal', { positions, count: wanted.length }), run: () => this.play(fits[0]) };
  }

  pilesElement(view, moves) {
    const fromStock = moves.find((move) => move.type === 'draw' && move.source === 'stock');
    const fromDiscard = moves.find((move) => move.type === 'draw' && move.source === 'discard');
    const stock = cardElement(null, {
      action: fromStock && (() => this.play(fromStock)),
      label: fromStock ? t('move.draw_stock') : t('table.stock_label', { count: view.stock_count }),
    });
    stock.dataset.focusKey = 'stock';
    stock.dataset.testid = 'stock';
    const discard = view.discard_top
      ? cardElement(view.discard_top, {
        action: fromDiscard && (() => this.play(fromDiscard)),
        label: fromDiscard ? t('move.draw_discard', { card: cardName(view.discard_top) }) : t('table.discard_label', { card: cardName(view.discard_top) }),
      })
      : h('div', { class: 'card empty', role: 'img', 'aria-label': t('table.discard_empty') });
    discard.dataset.focusKey = 'discard';
    const drawn = view.drawn;
    let drawnElement = null;
    if (drawn) {
      const who = drawn.seat === view.you
        ? t(`table.you_drew.${drawn.source}`)
        : t(`table.they_drew.${drawn.source}`, { name: view.players[drawn.seat].name });
      drawnElement = h('div', { class: 'pile drawn', 'data-testid': 'drawn' },
        cardElement(drawn.card), h('div', { class: 'muted' }, who));
    }
    return h('div', { class: 'piles' },
      h('div', { class: 'pile' }, stock, h('div', { class: 'muted', 'data-testid': 'stock-count' }, t('table.stock_count', { count: view.stock_count }))),
      h('div', { class: 'pile' }, discard, h('div', { class: 'muted' }, t('table.discard_count', { count: view.discard_count }))),
      drawnElement);
  }

  actionsElement(moves) {
    const buttons = [];
    for (const move of moves) {
      if (move.type === 'discard' || move.type === 'pass' || move.type === 'knock') {
        buttons.push(h('button', { type: 'button', 'data-focus-key': move.type, 'data-move': move.type, onclick: () => this.play(move) }, t(`move.${move.type}`)));
      }
    }
    return buttons.length ? h('div', { class: 'actions' }, buttons) : null;
  }

  scoresElement(view) {
    const holes = Array.from({ length: view.holes }, (_, i) => i + 1);
    return h('section', { class: 'panel scores' },
      h('h2', {}, t('table.scores')),
      h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': t('table.scores') },
        h('table', { 'data-testid': 'scores' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('table.player')), holes.map((hole) => h('th', { scope: 'col' }, formatNumber(hole))), h('th', { scope: 'col' }, t('table.total_column')))),
          h('tbody', {}, view.players.map((player) => h('tr', { 'data-seat': player.seat },
            h('th', { scope: 'row' }, player.name),
            holes.map((hole) => h('td', { 'data-hole': hole }, player.hole_scores[hole - 1] === undefined ? '' : formatNumber(player.hole_scores[hole - 1]))),
            h('td', { 'data-total': '' }, formatNumber(player.total))))))));
  }

  lastHoleElement(view) {
    const last = view.last_hole;
    return h('section', { class: 'panel last-hole', 'data-testid': 'last-hole' },
      h('h2', {}, t(`table.last_hole.${last.reason}`, { hole: last.hole })),
      h('div', { class: 'opponents' }, last.grids.map((grid, seat) => h('div', { class: 'player small' },
        h('h3', { class: 'name' }, view.players[seat].name),
        gridElement((position) => cardElement(grid[position]), view.grid_shape),
        h('div', {}, t('table.score', { score: last.scores[seat] }))))));
  }
}
