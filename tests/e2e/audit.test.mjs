// The in-browser audit (web/audit.js, web/jcs.js) run by Node on the logs of tests/vectors/ and on
// golf-log/2 exports of the server (tests/e2e/fixtures/: a 3x3 game with jokers, joker_value −3,
// negative_pairs "keep" and 3 cards revealed; a 2x2 game with knocking, jokers and a
// four-of-a-kind bonus, whose holes end by knocks): the genuine ones verify, and each kind of forgery is found at the entry it touches, even with
// every hash recomputed. Node has the same WebCrypto as the browser, so no browser is needed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { auditLog, entryHash, toHex } from '../../web/audit.js';
import { canonicalize } from '../../web/jcs.js';

const vector = (name) => readFileSync(new URL(`../vectors/${name}`, import.meta.url), 'utf8');
const RESHUFFLES = vector('log_two_seats_reshuffles.ndjson');
const FOUR_SEATS = vector('log_four_seats_bots.ndjson');
const fixture = (name) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8');
const NINE_CARDS = fixture('golf-log-2-3x3-jokers.ndjson');
const KNOCKS = fixture('golf-log-2-2x2-knock.ndjson');

const parse = (text) => text.trimEnd().split('\n').map((line) => JSON.parse(line));

async function write(entries, { rechain = true } = {}) {
  let head = new Uint8Array(32);
  for (const entry of entries) {
    if (rechain) {
      head = await entryHash(head, entry);
      entry.hash = toHex(head);
    }
  }
  return entries.map((entry) => `${canonicalize(entry)}\n`).join('');
}

const outcome = (report, check) => report.checks.find((c) => c.check === check).outcome;

test('JCS sorts keys by UTF-16 code units and writes strings as JSON.stringify does', () => {
  // U+1F600 is the surrogate pair D83D DE00, which sorts before U+FF61 in UTF-16 (not in code points).
  assert.equal(canonicalize({ '\uff61': 1, '\u{1f600}': 2, b: [true, null, 'é\n"'], a: -3 }),
    '{"a":-3,"b":[true,null,"é\\n\\""],"\u{1f600}":2,"\uff61":1}');
  assert.throws(() => canonicalize({ x: 1.5 }), /not an integer/);
});

test('the logs of tests/vectors verify, reshuffles included', async () => {
  for (const text of [RESHUFFLES, FOUR_SEATS]) {
    const report = await auditLog(text);
    assert.equal(report.verified, true, JSON.stringify(report.findings));
    assert.equal(report.firstBadSeq, null);
    assert.ok(report.checks.every((check) => check.outcome === 'ok'));
    assert.equal(report.steps.length, parse(text).length, 'one table per entry for the viewer');
  }
  assert.ok(parse(RESHUFFLES).filter((entry) => entry.type === 'stock_reshuffled').length >= 2);
  const last = (await auditLog(RESHUFFLES)).steps.at(-1);
  assert.ok(last.players.every((player) => player.grid.every((slot) => slot.up)), 'every card face up at the end');
});

test('a reshuffle changed, with the chain recomputed, fails at that entry', async () => {
  const entries = parse(RESHUFFLES);
  const reshuffle = entries.find((entry) => entry.type === 'stock_reshuffled');
  const order = reshuffle.data.order;
  [order[0], order[1]] = [order[1], order[0]];
  const report = await auditLog(await write(entries));
  assert.equal(report.firstBadSeq, reshuffle.seq);
  assert.equal(report.findings[0].check, 'reshuffles');
  assert.equal(outcome(report, 'hash_chain'), 'ok');
});

test('a client seed changed, with the chain recomputed, fails at the first deal', async () => {
  const entries = parse(FOUR_SEATS);
  entries.find((entry) => entry.type === 'player_joined').data.client_seed = 'steered';
  const report = await auditLog(await write(entries));
  const deal = entries.find((entry) => entry.type === 'hole_dealt');
  assert.equal(report.firstBadSeq, deal.seq);
  assert.equal(report.findings[0].check, 'deals');
});

test('a grid card changed at the end of a hole, with the chain recomputed, fails there', async () => {
  const entries = parse(FOUR_SEATS);
  const ended = entries.find((entry) => entry.type === 'hole_ended');
  const grid = ended.data.grids[1];
  const unused = ['KS', 'KH', 'KD', 'KC', 'QS'].find((card) => !ended.data.grids.flat().includes(card));
  grid[0] = unused;
  const report = await auditLog(await write(entries));
  assert.equal(report.firstBadSeq, ended.seq);
  assert.equal(report.findings[0].check, 'cards');
});

test('another seed, a salt, a line not canonical or a log cut short are each found', async () => {
  const reseeded = parse(FOUR_SEATS);
  reseeded.at(-1).data.seed = '00'.repeat(32);
  const seed = await auditLog(await write(reseeded));
  assert.equal(outcome(seed, 'commitment'), 'failed');
  assert.equal(seed.firstBadSeq, 1);

  const salted = parse(FOUR_SEATS);
  salted[4].salt = '0'.repeat(32);
  assert.equal((await auditLog(await write(salted))).firstBadSeq, 5);

  const lines = FOUR_SEATS.split('\n');
  lines[6] = lines[6].replace('{', '{ ');
  const spaced = await auditLog(lines.join('\n'));
  assert.equal(outcome(spaced, 'format'), 'failed');
  assert.equal(spaced.firstBadSeq, 7);

  const cut = await auditLog(await write(parse(FOUR_SEATS).slice(0, -1)));
  assert.equal(outcome(cut, 'complete'), 'failed');
  assert.equal(cut.verified, false);
});

test('golf-log/2 exports verify: 54-card decks, 3x3 and 2x2 grids, jokers, knocks', async () => {
  for (const text of [NINE_CARDS, KNOCKS]) {
    const entries = parse(text);
    assert.equal(entries[0].data.format, 'golf-log/2');
    const report = await auditLog(text);
    assert.equal(report.verified, true, JSON.stringify(report.findings));
    assert.ok(report.checks.every((check) => check.outcome === 'ok'));
    assert.ok(entries.filter((entry) => entry.type === 'hole_dealt').every((entry) => entry.data.deck.length === 54));
  }
  const nine = await auditLog(NINE_CARDS);
  assert.deepEqual(nine.steps.at(-1).shape, { rows: 3, columns: 3 });
  assert.ok(nine.steps.at(-1).players.every((player) => player.grid.length === 9));
  const knocks = parse(KNOCKS);
  assert.ok(knocks.some((entry) => entry.type === 'knocked'));
  assert.ok(knocks.some((entry) => entry.type === 'hole_ended' && entry.data.reason === 'knock'));
});

test('golf-log/2: a card changed, with the chain recomputed, fails at that entry', async () => {
  const entries = parse(NINE_CARDS);
  const swap = entries.find((entry) => entry.type === 'card_swapped');
  swap.data.card = swap.data.card === 'JR' ? 'JB' : 'JR';
  const report = await auditLog(await write(entries));
  assert.equal(report.firstBadSeq, swap.seq);
  assert.equal(report.findings[0].check, 'cards');
  assert.equal(outcome(report, 'hash_chain'), 'ok');
});

test('golf-log/2: the joker value changed, with the chain recomputed, fails at the first hole scored with a joker', async () => {
  const entries = parse(NINE_CARDS);
  entries[0].data.rules.joker_value = -5;
  const report = await auditLog(await write(entries));
  const withJoker = entries.find((entry) => entry.type === 'hole_ended' && entry.data.grids.flat().some((card) => ['JR', 'JB'].includes(card)));
  assert.equal(report.firstBadSeq, withJoker.seq);
  assert.equal(report.findings[0].check, 'scores');
});

test('golf-log/2: a score after a knock, or a knock the rules do not allow, is found at its entry', async () => {
  const scored = parse(KNOCKS);
  const ended = scored.find((entry) => entry.type === 'hole_ended' && entry.data.reason === 'knock');
  ended.data.scores[1] -= 1;
  const score = await auditLog(await write(scored));
  assert.equal(score.firstBadSeq, ended.seq);
  assert.equal(score.findings[0].check, 'scores');

  const forbidden = parse(KNOCKS);
  forbidden[0].data.rules.knock = false;
  const knock = await auditLog(await write(forbidden));
  assert.equal(knock.firstBadSeq, forbidden.find((entry) => entry.type === 'knocked').seq);
  assert.equal(knock.findings[0].key, 'knock_refused');
});
