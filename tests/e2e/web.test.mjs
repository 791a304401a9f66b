// The web client end to end, in Debian's headless Chromium driven by playwright-core: a game
// against three bots played by clicking, the scores shown against the API's, the replay viewer's
// in-browser check, and tampered exports opened from disk. Any console error fails the test.
// scripts/test-web sets GOLF_URL (a running server) and E2E_OUT (where screenshots go).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalize } from '../../web/jcs.js';
import { entryHash, toHex } from '../../web/audit.js';
import { api, BASE, DESKTOP, launchPersistent, OUT, openPage as openPageOf } from './support.mjs';

let browser;
let profile;

before(async () => {
  // A fresh profile (Chromium's --user-data-dir, which Playwright passes for a persistent context),
  // in English.
  profile = mkdtempSync(join(tmpdir(), 'golf-e2e-'));
  browser = await launchPersistent(profile, { viewport: DESKTOP, locale: 'en-US' });
});

after(async () => {
  await browser?.close();
  rmSync(profile, { recursive: true, force: true });
});

// A new page whose console errors, page errors and CSP violations are collected.
const openPage = () => openPageOf(browser);

// A finished game played by bots alone, as the export of the server.
async function botGame(seats, holes) {
  const created = await api('POST', '/v1/games', { body: { seats, holes } });
  for (let i = 0; i < seats; i += 1) {
    await api('POST', `/v1/games/${created.id}/players`, { body: { name: `Bot ${i}`, bot: 'greedy' }, token: created.host_token });
  }
  return { id: created.id, text: await api('GET', `/v1/games/${created.id}/export`) };
}

let playedGame = null;

test('a player creates a game against three bots, plays a whole hole by clicking, and sees the API\'s scores', async () => {
  const waiting = await api('POST', '/v1/games', { body: { seats: 3, holes: 9, rules: { final_turns: true } } });
  await api('POST', `/v1/games/${waiting.id}/players`, { body: { name: 'Bea' } });
  const { page, context, errors } = await openPage();
  await page.goto(`${BASE}/`);
  await page.getByRole('heading', { name: 'New game' }).waitFor();
  const listed = page.locator(`[data-game="${waiting.id}"]`);
  assert.match(await listed.textContent(), /1 of 3 seats taken.*Players: Bea/);
  const name = 'Adà <b>&amp;</b> 🏌';
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Your client seed').fill('dice: 4 1 6 6 2 3');
  await page.locator('select[name="seats"]').selectOption('4');
  await page.locator('select[name="bots"]').selectOption('3');
  await page.locator('input[name="holes"]').fill('1');
  await page.getByLabel('Flip after discard').selectOption('optional');
  await page.screenshot({ path: join(OUT, 'lobby.png'), fullPage: true });
  await page.getByRole('button', { name: 'Create and sit down' }).click();
  await page.waitForURL(/#\/game\//);
  const game = decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
  const seat = await page.evaluate((id) => JSON.parse(localStorage.getItem(`golf.seat.${id}`)), game);
  assert.equal(seat.seat, 0, 'the creator takes seat 0');

  const myGrid = page.getByTestId('my-grid');
  await myGrid.waitFor();
  // The initial reveal, with the keyboard alone: choose a position, then its pair is the move.
  await myGrid.locator('button.card').first().focus();
  await page.keyboard.press('Enter');
  await myGrid.locator('button.card.selected').waitFor();
  await page.keyboard.press('Tab');
  const revealed = page.waitForResponse((response) => response.url().endsWith('/moves'));
  await page.keyboard.press('Enter');
  assert.equal((await revealed).status(), 200);

  let screenshots = false;
  for (let turn = 0; turn < 60; turn += 1) {
    const status = page.getByTestId('status');
    await page.waitForFunction(() => {
      const text = document.querySelector('[data-testid="status"]')?.textContent || '';
      return text.includes('Game over') || text.includes('Your turn: draw');
    });
    if ((await status.textContent()).includes('Game over')) break;
    if (!screenshots) {
      await page.screenshot({ path: join(OUT, 'table-desktop.png'), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(OUT, 'table-phone.png'), fullPage: true });
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `the table fits a phone's width (${width} px)`);
      await page.setViewportSize({ width: 1280, height: 900 });
      screenshots = true;
    }
    // Only legal moves are buttons. Draw from the stock; on the first turn discard it and pass,
    // on the second discard it and flip a face-down card, then place each card on a face-down
    // one (or anywhere once none is left), which ends the hole within a few turns.
    await page.getByRole('button', { name: 'Draw from the stock' }).click();
    if (turn < 2) {
      await page.getByRole('button', { name: 'Discard the drawn card' }).click();
      await page.getByRole('button', { name: 'Pass (do not flip)' }).waitFor();
    }
    const last = page.waitForResponse((response) => response.url().endsWith('/moves'));
    if (turn === 0) {
      await page.getByRole('button', { name: 'Pass (do not flip)' }).click();
    } else {
      const place = myGrid.locator('button.card.back').or(myGrid.locator('button.card')).first();
      await place.click();
    }
    assert.equal((await last).status(), 200);
  }
  await page.waitForFunction(() => document.querySelector('[data-testid="status"]')?.textContent.includes('Game over'));
  assert.ok(screenshots, 'the table was screenshot mid-game');

  const view = await api('GET', `/v1/games/${game}/view`, { token: seat.token });
  assert.equal(view.status, 'finished');
  const rows = page.getByTestId('scores').locator('tbody tr');
  assert.equal(await rows.count(), 4);
  for (const player of view.players) {
    const row = page.getByTestId('scores').locator(`tbody tr[data-seat="${player.seat}"]`);
    assert.equal(await row.locator('th').textContent(), player.name, 'names are shown as text');
    assert.equal(await row.locator('td[data-hole="1"]').textContent(), String(player.hole_scores[0]));
    assert.equal(await row.locator('td[data-total]').textContent(), String(player.total));
  }
  assert.equal(await page.locator('[data-testid="scores"] b').count(), 0, 'a name never becomes markup');
  assert.ok((await page.getByTestId('last-hole').textContent()).includes(`Score ${view.last_hole.scores[0]}`));

  // A reload keeps the seat: the token is in localStorage.
  await page.reload();
  await page.getByTestId('my-grid').waitFor();

  await page.getByTestId('open-replay').click();
  await page.waitForURL(/#\/replay\//);
  const verdict = page.getByTestId('verdict');
  await verdict.waitFor();
  assert.equal(await verdict.getAttribute('data-verified'), 'true', await page.getByTestId('check').textContent());
  assert.match(await page.getByTestId('server-audit').textContent(), /verified/);
  assert.ok((await page.getByTestId('client-seeds').textContent()).includes('dice: 4 1 6 6 2 3'));
  await page.getByTestId('step').fill('10');
  await page.waitForFunction(() => document.querySelector('[data-testid="step-label"]')?.textContent.startsWith('Entry 10 '));
  await page.screenshot({ path: join(OUT, 'replay.png'), fullPage: true });
  playedGame = game;
  await context.close();
  assert.deepEqual(errors, []);
});

// Rewrites entries as canonical lines; with `rechain`, recomputes every hash from the first one.
async function ndjson(entries, rechain) {
  if (rechain) {
    let head = new Uint8Array(32);
    for (const entry of entries) {
      head = await entryHash(head, entry);
      entry.hash = toHex(head);
    }
  }
  return entries.map((entry) => `${canonicalize(entry)}\n`).join('');
}

async function checkFile(page, name, text) {
  const path = join(OUT, name);
  writeFileSync(path, text);
  await page.goto(`${BASE}/#/check`);
  await page.getByTestId('log-file').setInputFiles(path);
  const verdict = page.getByTestId('verdict');
  await verdict.waitFor();
  return {
    verified: await verdict.getAttribute('data-verified'),
    firstBadSeq: await verdict.getAttribute('data-first-bad-seq'),
    text: await page.getByTestId('check').textContent(),
  };
}

test('exports opened from disk: the genuine one checks, tampered ones fail at the entry changed', async () => {
  const { id, text } = playedGame
    ? { id: playedGame, text: await api('GET', `/v1/games/${playedGame}/export`) }
    : await botGame(4, 1);
  const { page, context, errors } = await openPage();
  const entries = () => text.trimEnd().split('\n').map((line) => JSON.parse(line));

  const genuine = await checkFile(page, `game-${id}.ndjson`, text);
  assert.equal(genuine.verified, 'true', genuine.text);

  // A card changed: the chain breaks there; with the chain recomputed the card is still wrong.
  for (const rechain of [false, true]) {
    const log = entries();
    const swap = log.find((entry) => entry.type === 'card_swapped');
    swap.data.card = swap.data.card === 'KS' ? 'QS' : 'KS';
    const result = await checkFile(page, `tampered-card${rechain ? '-rechained' : ''}.ndjson`, await ndjson(log, rechain));
    assert.equal(result.verified, 'false');
    assert.equal(result.firstBadSeq, String(swap.seq), result.text);
  }

  // A score lowered by 10 with every hash recomputed: the chain holds, the rules do not.
  const log = entries();
  const ended = log.find((entry) => entry.type === 'hole_ended');
  ended.data.scores[0] -= 10;
  const result = await checkFile(page, 'tampered-score.ndjson', await ndjson(log, true));
  assert.equal(result.verified, 'false');
  assert.equal(result.firstBadSeq, String(ended.seq), result.text);
  assert.match(result.text, /OK hash chain/);
  await page.screenshot({ path: join(OUT, 'check-tampered.png'), fullPage: true });
  await context.close();
  assert.deepEqual(errors, []);
});

test('an invited player joins through the link, and the host\'s table follows live without polling', async () => {
  const host = await openPage();
  const requests = [];
  host.page.on('request', (request) => requests.push({ url: request.url(), headers: request.headers() }));
  await host.page.goto(`${BASE}/`);
  await host.page.getByLabel('Your name').fill('Host');
  await host.page.locator('select[name="seats"]').selectOption('2');
  await host.page.locator('select[name="bots"]').selectOption('0');
  await host.page.locator('input[name="holes"]').fill('1');
  await host.page.getByRole('button', { name: 'Create and sit down' }).click();
  const invitation = host.page.getByTestId('invitation');
  await invitation.waitFor();
  const link = await invitation.inputValue();
  const game = decodeURIComponent(new URL(host.page.url()).hash.split('/')[2]);
  assert.equal(link, `${BASE}/#/game/${game}`, 'the link names the game and nothing else');
  const seat = await host.page.evaluate((id) => JSON.parse(localStorage.getItem(`golf.seat.${id}`)), game);
  assert.equal(requests.filter((request) => request.url.includes(seat.token)).length, 0, 'no token in a URL');

  // The guest is another origin (localhost), so another localStorage: another person.
  const guest = await openPage();
  await guest.page.goto(link.replace('127.0.0.1', 'localhost'));
  await guest.page.getByRole('heading', { name: /Join game/ }).waitFor();
  await guest.page.getByLabel('Your name').fill('   ');
  await guest.page.getByRole('button', { name: 'Take a seat' }).click();
  await guest.page.waitForFunction(() => document.getElementById('message').textContent.includes('name'));
  const detail = await guest.page.getByTestId('problem-detail').textContent();
  const refused = await api('POST', `/v1/games/${game}/players`, { body: { name: '   ' }, expect: 422 });
  assert.equal(detail, refused.detail, 'a problem is shown by its detail');
  assert.match(await guest.page.locator('#message').textContent(), /^The name was refused\. /, 'explained by its code');
  await guest.page.getByLabel('Your name').fill('Guest <i>');
  await guest.page.getByLabel('Your client seed').fill('guest seed');
  await guest.page.getByRole('button', { name: 'Take a seat' }).click();
  await guest.page.getByTestId('my-grid').waitFor();

  // The host's page learns it from the stream alone.
  const viewsBefore = requests.filter((request) => request.url.endsWith('/view')).length;
  await host.page.waitForFunction(() => document.querySelector('[data-testid="status"]')?.textContent.includes('of your cards face up'));
  const streams = requests.filter((request) => request.url.endsWith(`/v1/games/${game}/stream`));
  assert.ok(streams.length >= 1, 'the host follows the stream');
  assert.equal(streams[0].headers.authorization, `Bearer ${seat.token}`, 'the token travels in the header');
  assert.equal(await host.page.locator('[data-seat="1"] .name').textContent(), 'Guest <i>');

  const guestGrid = guest.page.getByTestId('my-grid');
  await guestGrid.locator('button.card').nth(1).click();
  await guestGrid.locator('button.card').nth(4).click();
  await host.page.waitForFunction(() => document.querySelectorAll('[data-testid="grid-1"] .card:not(.back)').length === 2);
  const view = await api('GET', `/v1/games/${game}/view`, { token: seat.token });
  const shown = await host.page.locator('[data-testid="grid-1"] .card').evaluateAll((cards) => cards.map((card) => card.dataset.card || null));
  assert.deepEqual(shown, view.players[1].grid, 'the host sees what the API shows the host');

  // Idle, the page asks nothing: it waits on the stream.
  const views = requests.filter((request) => request.url.endsWith('/view')).length;
  await host.page.waitForTimeout(1500);
  assert.equal(requests.filter((request) => request.url.endsWith('/view')).length, views, 'no polling');
  assert.ok(views - viewsBefore <= 3, `one view fetch per change (${views - viewsBefore})`);

  await host.context.close();
  await guest.context.close();
  assert.deepEqual(host.errors, []);
  assert.deepEqual(guest.errors.filter((error) => !error.includes('status of 422')), []);
});

test('the API docs page renders every operation under its content security policy', async () => {
  // The page and its assets come from the server itself; a CSP violation would be a console error.
  const { page, context, errors } = await openPage();
  await page.goto(`${BASE}/docs/`);
  const operations = page.locator('.opblock');
  await operations.first().waitFor();
  assert.ok(await operations.count() >= 10, 'the operations of the spec are listed');
  await page.screenshot({ path: join(OUT, 'docs.png') });
  await context.close();
  assert.deepEqual(errors, []);
});

test('a stacked game warns a player on the join form and at the table', async () => {
  const canonical = ['S', 'H', 'D', 'C'].flatMap((suit) =>
    ['A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'].map((rank) => `${rank}${suit}`));
  const stacked = await api('POST', '/v1/games', { body: { seats: 2, holes: 1, decks: [canonical] } });
  const fair = await api('POST', '/v1/games', { body: { seats: 2, holes: 1 } });
  const { page, context, errors } = await openPage();
  await page.goto(`${BASE}/#/game/${fair.id}`);
  await page.getByRole('heading', { name: /Join game/ }).waitFor();
  assert.equal(await page.getByTestId('stacked').count(), 0, 'a fair game carries no warning');
  await page.goto(`${BASE}/#/game/${stacked.id}`);
  await page.getByRole('heading', { name: /Join game/ }).waitFor();
  assert.match(await page.getByTestId('stacked').textContent(), /Stacked deck/);
  await page.getByLabel('Your name').fill('Cleo');
  await page.getByRole('button', { name: 'Take a seat' }).click();
  await page.getByTestId('status').waitFor();
  assert.match(await page.getByTestId('stacked').textContent(), /host knows every card/);
  await context.close();
  assert.deepEqual(errors, []);
});

test('a link whose game id is not one sends nothing of it to the API', async () => {
  const { page, context, errors } = await openPage();
  const requests = [];
  page.on('request', (request) => requests.push(request.url()));
  for (const crafted of ['..%2F..%2Fhealthz', 'x%3Fafter%3D1']) {
    await page.goto(`${BASE}/#/game/${crafted}`);
    await page.waitForFunction(() => document.getElementById('message').textContent.includes('does not name a game'));
  }
  const leaked = requests.filter((url) => url.includes('healthz') || url.includes('after=1'));
  assert.deepEqual(leaked, [], 'no request carries the crafted id');
  await context.close();
  assert.deepEqual(errors, []);
});
