// The analysis in the replay viewer, in Debian's headless Chromium: a stacked two-seat hole in
// which Bea swaps a King (0 points) away for a drawn Queen late in the hole (the blunder planted
// by tests/engine_expert.rs), played through the API to its end; the viewer marks the blunder on
// the slider, labels it at its entry with the points lost as the API gives them, rings the best
// move on the cards, leaves Ann's obvious reply unlabelled, and sums up each seat; axe-clean. A
// server that runs no analyses is said so. Screenshots: target/e2e/analysis-{desktop,phone}.png.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, axe, BASE, DESKTOP, launch, openPage, screenshots } from './support.mjs';

// The analysis of a one-hole game takes a few seconds in the debug build, but the server's one
// analysis thread may first have to get through the games that the other test files finished.
const ANALYSIS_WAIT = 240_000;
let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

const RANKS = ['A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'];
const CANONICAL = ['S', 'H', 'D', 'C'].flatMap((suit) => RANKS.map((rank) => `${rank}${suit}`));

// A deal order for hole 1 (dealer seat 0) of two seats: card d goes to seat (1 + d) mod 2 at
// position d div 2 (RULES.md, "The deal"), then the discard, then the top of the stock.
function stackedDeck(grids, discard, stockTop) {
  const order = Array.from({ length: 12 }, (_, d) => grids[(1 + d) % 2][Math.floor(d / 2)]);
  order.push(discard, ...stockTop);
  return [...order, ...CANONICAL.filter((card) => !order.includes(card))];
}

// Ann (seat 0) holds a Jack face up at position 1, Bea (seat 1) a King; each fills three of its
// four face-down cards from the stock, then Bea draws the Queen of hearts and puts it on her King
// (the blunder), and Ann takes the King from the discard pile onto her Jack (the obvious move).
// Both leave and the greedy bot ends the hole. Answers the game's id and the two moves' entries.
async function playedGame() {
  const deck = stackedDeck(
    [['JS', '5H', '9D', '8C', '7S', '6D'], ['KS', '4H', '9C', '8D', '7H', '3D']],
    '10C', ['AH', 'AS', '2S', '2H', '3H', '3C', 'QH', 'QD', '10S']);
  const game = await api('POST', '/v1/games', { body: { seats: 2, holes: 1, decks: [deck] } });
  const tokens = [];
  for (const name of ['Ann', 'Bea']) tokens.push((await api('POST', `/v1/games/${game.id}/players`, { body: { name } })).token);
  const move = (seat, body) => api('POST', `/v1/games/${game.id}/moves`, { body, token: tokens[seat] });
  await move(0, { type: 'reveal', positions: [0, 1] });
  await move(1, { type: 'reveal', positions: [0, 1] });
  for (const [seat, position] of [[1, 2], [0, 2], [1, 3], [0, 3], [1, 4], [0, 4]]) {
    await move(seat, { type: 'draw', source: 'stock' });
    await move(seat, { type: 'swap', position });
  }
  const drawn = await move(1, { type: 'draw', source: 'stock' });
  assert.equal(drawn.drawn.card, 'QH', 'Bea draws the planted Queen');
  const blunder = (await move(1, { type: 'swap', position: 0 })).version;
  await move(0, { type: 'draw', source: 'discard' });
  const obvious = (await move(0, { type: 'swap', position: 0 })).version;
  for (const token of tokens) await api('POST', `/v1/games/${game.id}/leave`, { token });
  assert.equal((await api('GET', `/v1/games/${game.id}`)).status, 'finished');
  return { id: game.id, blunder, obvious };
}

const text = (locator) => locator.textContent();

test('the replay viewer marks the planted blunder on the slider, labels it at its entry and shows the best move', { timeout: ANALYSIS_WAIT + 60_000 }, async () => {
  const { id, blunder, obvious } = await playedGame();
  const english = await browser.newContext({ locale: 'en-US', viewport: DESKTOP });
  const { page, errors } = await openPage(english);
  await page.goto(`${BASE}/#/replay/${id}`);
  await page.locator('[data-testid="analysis-status"][data-state="done"]').waitFor({ timeout: ANALYSIS_WAIT });
  const analysis = await api('GET', `/v1/games/${id}/analysis`);
  const judged = analysis.decisions.find((decision) => decision.seq === blunder);
  assert.equal(judged.label, 'blunder', JSON.stringify(judged));

  // The slider's tick at the blunder's entry, in colour and in words.
  const count = Number(await page.getByTestId('step').getAttribute('max'));
  const tick = page.locator(`[data-testid="slider-marks"] .tick[data-seq="${blunder}"]`);
  assert.equal(await tick.getAttribute('data-label'), 'blunder');
  assert.equal(await tick.evaluate((element) => getComputedStyle(element).backgroundColor), 'rgb(179, 38, 30)');
  const marks = await page.getByTestId('slider-marks').getAttribute('aria-label');
  assert.match(marks, new RegExp(`blunder at entry ${blunder}\\b`));
  const slider = await page.getByTestId('step').boundingBox();
  const at = await tick.boundingBox();
  const expected = slider.x + 8 + ((blunder - 1) / (count - 1)) * (slider.width - 16);
  assert.ok(Math.abs(at.x + at.width / 2 - expected) < 2, `the tick sits under entry ${blunder} of ${count}`);

  // The list of mistakes and blunders moves the slider to the blunder.
  await page.locator(`[data-testid="analysis-moments"] button[data-seq="${blunder}"]`).click();
  await page.waitForFunction((seq) => document.querySelector('[data-testid="step-label"]')?.textContent.startsWith(`Entry ${seq} `), blunder);
  assert.equal(await page.getByTestId('step').inputValue(), String(blunder));
  const decision = page.locator(`[data-testid="decision"][data-seq="${blunder}"]`);
  await decision.waitFor();
  assert.equal(await text(decision.getByTestId('decision-label')), 'blunder');
  assert.match(await text(decision), new RegExp(`^Bea played: Place the drawn card at position 1\\. ${judged.loss} points lost · blunder`));
  // The best move, as the samples drawn from the game's seed find it: Bea keeps her King and
  // discards the Queen, or puts the Queen elsewhere in her grid. It is named, and ringed on the
  // cards: the discard pile where it puts the Queen, or that place of Bea's grid.
  // The cards' names as the page writes them (card.name, rank names spelled out).
  const beaAfter = [null, 'Four of hearts', 'Ace of hearts', 'Two of spades', 'Three of hearts', 'Three of diamonds, face down'];
  const discards = judged.best.type === 'discard';
  assert.ok(discards || (judged.best.type === 'swap' && judged.best.position > 0), JSON.stringify(judged.best));
  const bestText = discards ? 'Discard the drawn card' : `Place the drawn card at position ${judged.best.position + 1}`;
  assert.match(await text(decision.getByTestId('best-move')),
    new RegExp(`^Best move: ${bestText} \\(expected score ${judged.expected_best}, against ${judged.expected_played} for the move played\\)`));
  const ringed = page.locator('.replay-board .card.best');
  assert.equal(await ringed.count(), 1);
  assert.equal(await ringed.getAttribute('aria-label'), `${discards ? 'King of spades' : beaAfter[judged.best.position]} (best move)`);
  const ringedIn = discards ? '[data-testid="discard"] .card' : `[data-seat="1"] .grid .card:nth-child(${judged.best.position + 1})`;
  assert.equal(await page.locator(`.replay-board ${ringedIn}.best`).count(), 1);
  // The King's place in Bea's grid is marked as the move played.
  const played = page.locator('.replay-board [data-seat="1"] .grid .card').first();
  assert.equal(await played.getAttribute('aria-label'), 'Queen of hearts (move played)');

  // Each seat's summary, as the API counts it.
  for (const seat of analysis.seats) {
    const row = page.locator(`[data-testid="analysis-seats"] tr[data-seat="${seat.seat}"]`);
    assert.deepEqual(await row.locator('td').allTextContents(),
      [seat.decisions, seat.mean_loss, seat.mistakes, seat.blunders].map((value) => value.toLocaleString('en')));
  }
  assert.equal(await text(page.locator('[data-testid="analysis-seats"] tr[data-seat="1"] th')), 'Bea');
  assert.ok(analysis.seats[1].blunders >= 1);
  await axe(page, 'replay with analysis');
  await screenshots(page, 'analysis');

  // Ann's King taken from the discard pile onto her Jack is judged and not labelled.
  await page.getByTestId('step').fill(String(obvious));
  const good = page.locator(`[data-testid="decision"][data-seq="${obvious}"]`);
  await good.waitFor();
  assert.equal(await good.getAttribute('data-label'), '');
  assert.equal(await good.getByTestId('decision-label').count(), 0);
  assert.match(await text(good), /^Ann played: Place the drawn card at position 1\./);
  await english.close();
  assert.deepEqual(errors, []);
});

test('the replay viewer says so politely when the server runs no analyses', async () => {
  const created = await api('POST', '/v1/games', { body: { seats: 2, holes: 1 } });
  for (const name of ['Bot 0', 'Bot 1']) {
    await api('POST', `/v1/games/${created.id}/players`, { body: { name, bot: 'greedy' }, token: created.host_token });
  }
  const english = await browser.newContext({ locale: 'en-US', viewport: DESKTOP });
  const { page, errors } = await openPage(english);
  // What a server with GOLF_ANALYSIS_THREADS=0 answers (tests/api_analysis.rs checks that it does).
  await page.route('**/analysis', (route) => route.fulfill({
    status: 503,
    contentType: 'application/problem+json',
    body: JSON.stringify({ type: 'urn:golf-server:problem:analysis_disabled', title: 'Service Unavailable', status: 503, code: 'analysis_disabled', detail: 'this server computes no analyses' }),
  }));
  await page.goto(`${BASE}/#/replay/${created.id}`);
  const status = page.locator('[data-testid="analysis-status"][data-state="disabled"]');
  await status.waitFor();
  assert.equal(await text(status), 'This server does not analyse games, so there is no analysis of this one.');
  assert.equal(await page.getByTestId('slider-marks').count(), 0);
  assert.equal(await page.locator('#message').textContent(), '', 'no error message: nothing went wrong');
  await english.close();
  assert.deepEqual(errors.filter((error) => !error.includes('status of 503')), []);
});
