// The in-browser audit of a finished game's log (docs/AUDIT.md), so that a player need not take
// the server's word: every line canonical (RFC 8785), the hash chain, the salts, the revealed
// seed against the commitment, the effective seed from the client seeds, every deal and reshuffle
// re-derived with the fair-shuffle protocol of docs/RULES.md, every card drawn, placed, revealed or
// flipped followed from the deal, every knock allowed, every hole re-scored from its grids under
// the game's options (golf-log/2: any grid shape, jokers, the scoring options), and the winners.
// It also keeps the table after each entry, every card known, for the replay viewer.

import { canonicalize } from './jcs.js';
import { gridScore, scoringOf, shapeOf } from './scoring.js';

const encoder = new TextEncoder();
const TWO_64 = 1n << 64n;
const RANKS = ['A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'];
const STANDARD_DECK = [...'SHDC'].flatMap((suit) => RANKS.map((rank) => rank + suit));
// The canonical deck of a game with `jokers` jokers (0 or 2): the 52 cards, then JR and JB.
const canonicalDeck = (jokers) => (jokers === 2 ? [...STANDARD_DECK, 'JR', 'JB'] : STANDARD_DECK);
const ENTRY_KEYS = 'at,data,hash,salt,seq,type';
// The checks that follow the table entry by entry.
const FOLLOWED = ['deals', 'reshuffles', 'cards', 'scores', 'winners'];

export const CHECKS = [
  'format', 'complete', 'hash_chain', 'salts', 'commitment', 'effective_seed',
  'deals', 'reshuffles', 'cards', 'scores', 'winners',
];

function bytes(...parts) {
  const arrays = parts.map((part) => (typeof part === 'string' ? encoder.encode(part) : part));
  const out = new Uint8Array(arrays.reduce((sum, array) => sum + array.length, 0));
  let offset = 0;
  for (const array of arrays) {
    out.set(array, offset);
    offset += array.length;
  }
  return out;
}

async function sha256(...parts) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes(...parts)));
}

export function toHex(array) {
  return Array.from(array, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function fromHex(text) {
  if (typeof text !== 'string' || !/^([0-9a-f]{2})*$/.test(text)) return null;
  return Uint8Array.from(text.match(/../g) || [], (pair) => parseInt(pair, 16));
}

function u32be(n) {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
}

function u64be(n) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
}

// The words of shuffle `k` of hole `h`: SHA-256(S ‖ "golf-shuffle" ‖ u32be(h) ‖ u32be(k) ‖ u64be(i))
// for i = 0, 1, ..., read as big-endian u64 words.
class WordStream {
  constructor(seed, hole, shuffle) {
    this.prefix = bytes(seed, 'golf-shuffle', u32be(hole), u32be(shuffle));
    this.index = 0;
    this.block = null;
    this.offset = 32;
  }

  async next() {
    if (this.offset === 32) {
      this.block = await sha256(this.prefix, u64be(this.index));
      this.index += 1;
      this.offset = 0;
    }
    const word = new DataView(this.block.buffer).getBigUint64(this.offset);
    this.offset += 8;
    return word;
  }
}

// Fisher–Yates from the last element down, rejecting words at or above 2^64 − (2^64 mod (i+1)).
export async function fairShuffle(cards, seed, hole, shuffle) {
  const stream = new WordStream(seed, hole, shuffle);
  const out = cards.slice();
  for (let i = out.length - 1; i >= 1; i -= 1) {
    const bound = BigInt(i + 1);
    const limit = TWO_64 - (TWO_64 % bound);
    let word = await stream.next();
    while (word >= limit) word = await stream.next();
    const j = Number(word % bound);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

// The hash of an entry: SHA-256(previous hash ‖ JCS(entry without its hash)).
export async function entryHash(previous, entry) {
  const { hash, ...unhashed } = entry;
  return sha256(previous, canonicalize(unhashed));
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// Audits the NDJSON text of an exported log. Answers {verified, stacked, firstBadSeq, checks:
// [{check, outcome}], findings: [{seq, check, key, params}], entries, steps, facts}; `steps[i]`
// is the table right after entries[i]. A finding says what is wrong as a key of the page's
// catalogs (finding.*) and its parameters, so that the viewer says it in the page's language.
export async function auditLog(text) {
  const report = new Report();
  const entries = parseLines(text, report);
  if (entries.length === 0) {
    report.fail('format', 1, 'no_entry');
    return report.done([], [], {});
  }
  const created = entries[0].data || {};
  const ended = entries[entries.length - 1].data || {};
  report.stacked = created.stacked === true;
  if (entries[0].type !== 'game_created' || entries[entries.length - 1].type !== 'game_ended') {
    report.fail('complete', entries[entries.length - 1].seq, 'incomplete');
  }
  const facts = { commitment: created.commitment, seed: ended.seed || null, gameId: created.game_id };
  facts.headHash = await checkChain(entries, report);

  const seed = fromHex(ended.seed);
  if (!seed || seed.length !== 32) {
    report.fail('commitment', entries[entries.length - 1].seq, 'no_seed');
    report.skip('salts', 'effective_seed', 'deals', 'reshuffles');
  } else {
    if (toHex(await sha256(seed)) !== created.commitment) {
      report.fail('commitment', 1, 'commitment');
    }
    await checkSalts(entries, seed, report);
  }
  const joins = entries.filter((entry) => entry.type === 'player_joined');
  facts.clientSeeds = joins.map((entry) => ({
    seat: entry.data.seat, name: entry.data.name, clientSeed: entry.data.client_seed, bot: entry.data.bot,
  }));
  let effective = null;
  if (seed) {
    effective = await effectiveSeed(seed, joins, created.seats, report);
    if (effective) facts.effectiveSeed = toHex(effective);
  }
  const steps = await new Table(created, effective, report).replay(entries);
  return report.done(entries, steps, facts);
}

function parseLines(text, report) {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const entries = [];
  for (const [index, line] of lines.entries()) {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      report.fail('format', index + 1, 'not_json', { line: index + 1 });
      break;
    }
    const shaped = entry && typeof entry === 'object' && !Array.isArray(entry)
      && Object.keys(entry).sort().join(',') === ENTRY_KEYS && entry.data && typeof entry.data === 'object';
    if (!shaped) {
      report.fail('format', index + 1, 'not_entry', { line: index + 1 });
      break;
    }
    let canonical = false;
    try {
      canonical = canonicalize(entry) === line;
    } catch {
      canonical = false;
    }
    if (!canonical) report.fail('format', entry.seq, 'not_canonical', { seq: entry.seq });
    entries.push(entry);
  }
  return entries;
}

async function checkChain(entries, report) {
  let head = new Uint8Array(32);
  for (const [position, entry] of entries.entries()) {
    if (entry.seq !== position + 1) {
      report.fail('hash_chain', position + 1, 'misnumbered', { position: position + 1, seq: entry.seq });
      return null;
    }
    head = await entryHash(head, entry);
    if (toHex(head) !== entry.hash) {
      report.fail('hash_chain', entry.seq, 'wrong_hash', { seq: entry.seq, type: entry.type });
      return null;
    }
  }
  return toHex(head);
}

async function checkSalts(entries, seed, report) {
  for (const entry of entries) {
    const salt = toHex((await sha256(seed, 'golf-salt', u64be(entry.seq))).slice(0, 16));
    if (entry.salt !== salt) {
      report.fail('salts', entry.seq, 'wrong_salt', { seq: entry.seq });
      return;
    }
  }
}

// S = SHA-256(seed ‖ c_0 ‖ 0x00 ‖ … ‖ c_{n-1} ‖ 0x00), one player_joined per seat in seat order.
async function effectiveSeed(seed, joins, seats, report) {
  for (const [index, join] of joins.entries()) {
    if (join.data.seat !== index || typeof join.data.client_seed !== 'string') {
      report.fail('effective_seed', join.seq, 'wrong_seat', { seq: join.seq, seat: index });
      return null;
    }
  }
  if (joins.length !== seats) {
    report.fail('effective_seed', 1, 'seat_count', { count: joins.length, seats });
    return null;
  }
  const parts = joins.flatMap((join) => [join.data.client_seed, new Uint8Array([0])]);
  return sha256(seed, ...parts);
}

class Report {
  constructor() {
    this.findings = [];
    this.skipped = new Set();
    this.stacked = false;
    this.stackedHoles = [];
  }

  fail(check, seq, key, params = {}) {
    this.findings.push({ seq, check, key, params });
  }

  failed(check) {
    return this.findings.some((finding) => finding.check === check);
  }

  skip(...checks) {
    for (const check of checks) this.skipped.add(check);
  }

  done(entries, steps, facts) {
    const seqs = this.findings.map((finding) => finding.seq).filter((seq) => seq !== null);
    const checks = CHECKS.map((check) => ({
      check,
      outcome: this.failed(check) ? 'failed' : this.skipped.has(check) ? 'skipped' : 'ok',
    }));
    return {
      verified: this.findings.length === 0 && this.skipped.size === 0,
      stacked: this.stacked,
      stackedHoles: this.stackedHoles,
      firstBadSeq: seqs.length ? Math.min(...seqs) : null,
      findings: this.findings,
      checks,
      entries,
      steps,
      facts,
    };
  }
}

// The table as the log builds it, every card known: it re-derives each deal and reshuffle,
// follows every card from the deck, and scores every hole. After the first finding it goes on
// with the logged values (the viewer still shows each step) but reports nothing more.
class Table {
  constructor(created, seed, report) {
    this.seats = created.seats;
    this.rules = created.rules || {};
    this.shape = shapeOf(this.rules.grid);
    this.cells = this.shape.rows * this.shape.columns;
    this.scoring = scoringOf(this.rules);
    this.deck = canonicalDeck(this.rules.jokers ?? 0);
    this.knocked = null;
    this.seed = seed;
    this.report = report;
    this.players = [];
    this.hole = 0;
    this.dealer = null;
    this.stock = [];
    this.discard = [];
    this.drawn = null;
    this.shuffles = 0;
    // A stacked game's explicit decks are its leading deals: they are reported, not failed.
    this.leadingStacked = true;
    this.winners = null;
  }

  fail(check, seq, key, params) {
    if (!this.broken) this.report.fail(check, seq, key, params);
    this.broken = true;
  }

  async replay(entries) {
    const steps = [];
    for (const entry of entries) {
      try {
        await this.apply(entry);
      } catch (error) {
        this.fail('cards', entry.seq, 'unappliable', { seq: entry.seq, type: entry.type, error: error.message });
      }
      steps.push(this.snapshot(entry));
    }
    if (!this.seed) this.report.skip('deals', 'reshuffles');
    // Past its first finding the table follows the log's word, so what it would say is not a check.
    if (this.broken) this.report.skip(...FOLLOWED.filter((check) => !this.report.failed(check)));
    return steps;
  }

  async apply(entry) {
    const { seq, type, data } = entry;
    const expect = (check, holds, key, params = {}) => {
      if (!holds) this.fail(check, seq, key, { ...params, seq, type });
    };
    switch (type) {
      case 'game_created':
        break;
      case 'player_joined':
        this.players[data.seat] = {
          name: data.name, bot: data.bot, clientSeed: data.client_seed,
          grid: [], scores: [], total: 0,
        };
        break;
      case 'hole_dealt':
        await this.deal(entry, expect);
        break;
      case 'cards_revealed':
        data.positions.forEach((position, i) => {
          const slot = this.players[data.seat].grid[position];
          expect('cards', slot.card === data.cards[i], 'holds_other', { position, card: slot.card, expected: data.cards[i] });
          expect('cards', !slot.up, 'already_up', { position });
          slot.card = data.cards[i];
          slot.up = true;
        });
        break;
      case 'card_drawn': {
        const card = data.source === 'stock' ? this.stock.shift() : this.discard.pop();
        expect('cards', card === data.card, `drew_other.${data.source}`, { card, expected: data.card });
        this.drawn = { seat: data.seat, source: data.source, card: data.card };
        break;
      }
      case 'card_swapped': {
        const slot = this.players[data.seat].grid[data.position];
        expect('cards', this.drawn && this.drawn.card === data.card, 'drawn_other', { card: this.drawn && this.drawn.card, expected: data.card });
        expect('cards', slot.card === data.replaced, 'held_other', { position: data.position, card: slot.card, expected: data.replaced });
        this.discard.push(data.replaced);
        slot.card = data.card;
        slot.up = true;
        this.drawn = null;
        break;
      }
      case 'card_discarded':
        expect('cards', this.drawn && this.drawn.source === 'stock' && this.drawn.card === data.card,
          'discarded_other', { card: this.drawn && this.drawn.card, expected: data.card });
        this.discard.push(data.card);
        this.drawn = null;
        break;
      case 'card_flipped': {
        const slot = this.players[data.seat].grid[data.position];
        expect('cards', slot.card === data.card && !slot.up, `flipped_other.${slot.up ? 'up' : 'down'}`,
          { position: data.position, card: slot.card, expected: data.card });
        slot.up = true;
        break;
      }
      case 'flip_declined':
        break;
      case 'knocked':
        expect('cards', this.rules.knock === true && this.knocked === null && !this.drawn, 'knock_refused', { seat: data.seat });
        this.knocked = data.seat;
        break;
      case 'bot_took_seat':
        this.players[data.seat].bot = data.bot;
        break;
      case 'stock_reshuffled':
        await this.reshuffle(entry, expect);
        break;
      case 'hole_ended':
        this.endHole(entry, expect);
        break;
      case 'game_ended': {
        const totals = this.players.map((player) => player.total);
        expect('winners', same(totals, data.totals), 'totals', { computed: JSON.stringify(totals), logged: JSON.stringify(data.totals) });
        const low = Math.min(...totals);
        const winners = totals.flatMap((total, seat) => (total === low ? [seat] : []));
        expect('winners', same(winners, data.winners), 'winners', { computed: JSON.stringify(winners), logged: JSON.stringify(data.winners) });
        this.winners = data.winners;
        break;
      }
      default:
        this.fail('format', seq, 'unknown_type', { seq, type });
    }
  }

  async deal(entry, expect) {
    const { hole, dealer, deck, discard } = entry.data;
    const n = this.seats;
    expect('deals', hole === this.hole + 1, 'hole_order', { hole, previous: this.hole });
    expect('deals', dealer === (hole - 1) % n, 'dealer', { hole, expected: (hole - 1) % n, dealer });
    const size = this.deck.length;
    expect('deals', Array.isArray(deck) && deck.length === size && new Set(deck).size === size
      && deck.every((card) => this.deck.includes(card)), 'deck', { count: size });
    if (this.seed) {
      const fair = await fairShuffle(this.deck, this.seed, hole, 0);
      if (!same(fair, deck)) {
        if (this.report.stacked && this.leadingStacked) this.report.stackedHoles.push(hole);
        else expect('deals', false, 'unfair_deal', { hole });
      } else {
        this.leadingStacked = false;
      }
    }
    const dealt = this.cells * n;
    expect('deals', discard === deck[dealt], 'discard_start', { expected: deck[dealt], card: discard });
    for (const player of this.players) player.grid = Array.from({ length: this.cells }, () => ({ card: null, up: false }));
    deck.slice(0, dealt).forEach((card, d) => {
      this.players[(dealer + 1 + d) % n].grid[Math.floor(d / n)].card = card;
    });
    this.discard = [deck[dealt]];
    this.stock = deck.slice(dealt + 1);
    this.hole = hole;
    this.dealer = dealer;
    this.drawn = null;
    this.shuffles = 0;
    this.knocked = null;
  }

  async reshuffle(entry, expect) {
    const { hole, shuffle, order } = entry.data;
    expect('reshuffles', hole === this.hole && shuffle === this.shuffles + 1,
      'reshuffle_order', { shuffle, hole, previous: this.shuffles, previousHole: this.hole });
    expect('reshuffles', this.stock.length === 0, 'stock_not_empty');
    const top = this.discard[this.discard.length - 1];
    if (this.seed) {
      const fair = await fairShuffle(this.discard.slice(0, -1), this.seed, hole, shuffle);
      expect('reshuffles', same(fair, order), 'unfair_reshuffle');
    }
    this.stock = order.slice();
    this.discard = [top];
    this.shuffles = shuffle;
  }

  endHole(entry, expect) {
    const { hole, reason, grids, scores } = entry.data;
    const known = this.players.map((player) => player.grid.map((slot) => slot.card));
    expect('scores', hole === this.hole, 'hole_not_in_play', { hole, current: this.hole });
    expect('cards', same(known, grids), 'grids');
    if (reason === 'grid_complete') {
      const complete = this.players.some((player) => player.grid.every((slot) => slot.up));
      expect('scores', complete, 'no_complete_grid');
    }
    if (reason === 'knock') expect('scores', this.knocked !== null, 'no_knock');
    const computed = grids.map((grid) => gridScore(grid, this.scoring));
    expect('scores', same(computed, scores), 'scores', { computed: JSON.stringify(computed), logged: JSON.stringify(scores) });
    this.players.forEach((player, seat) => {
      player.grid = grids[seat].map((card) => ({ card, up: true }));
      player.scores.push(scores[seat]);
      player.total += scores[seat];
    });
    this.drawn = null;
  }

  snapshot(entry) {
    return {
      seq: entry.seq,
      type: entry.type,
      hole: this.hole,
      dealer: this.dealer,
      shape: this.shape,
      knocked: this.knocked,
      players: this.players.map((player) => ({
        name: player.name,
        bot: player.bot,
        grid: player.grid.map((slot) => ({ ...slot })),
        scores: player.scores.slice(),
        total: player.total,
      })),
      discardTop: this.discard.length ? this.discard[this.discard.length - 1] : null,
      discardCount: this.discard.length,
      stockCount: this.stock.length,
      drawn: this.drawn && { ...this.drawn },
      winners: this.winners,
    };
  }
}
