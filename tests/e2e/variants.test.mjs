// House-rule variants in the web client, in Chromium with axe-core: a 9-card game created from
// the lobby's "9-card" preset and a hole played with the keyboard (three cards revealed, a 3 × 3
// grid), and a 4-card game with knocking where the player knocks, hears the knock and sees the
// hole end by it; the rules panel explains the options and the replay checks the golf-log/2 log.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import en from '../../web/lang-en.js';
import { api, axe, BASE, DESKTOP, launch, OUT, openPage } from './support.mjs';

let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

const status = (page) => page.getByTestId('status').textContent();

// Creates a 1-hole game against one greedy bot from the lobby with `preset`, axe on the form.
async function createFromPreset(page, preset, label) {
  await page.goto(`${BASE}/`);
  await page.getByLabel('Your name').fill('Vic');
  await page.locator('select[name="seats"]').selectOption('2');
  await page.locator('select[name="bots"]').selectOption('1');
  await page.locator('input[name="holes"]').fill('1');
  await page.getByLabel('Variant').selectOption({ label });
  await axe(page, `lobby, ${preset} preset`);
  await page.screenshot({ path: join(OUT, `lobby-${preset}.png`), fullPage: true });
  await page.getByRole('button', { name: 'Create and sit down' }).focus();
  await page.keyboard.press('Enter');
  await page.getByTestId('my-grid').locator('button.card').first().waitFor();
  const game = decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
  const seat = await page.evaluate((id) => JSON.parse(localStorage.getItem(`golf.seat.${id}`)), game);
  return { game, seat };
}

// Presses Enter on the first card of my grid that is a legal move, chosen with the keyboard.
async function pressCard(page, selector) {
  await page.getByTestId('my-grid').locator(selector).first().focus();
  const answered = page.waitForResponse((response) => response.url().endsWith('/moves'));
  await page.keyboard.press('Enter');
  assert.equal((await answered).status(), 200);
}

test('a 9-card game from the lobby\'s preset: three cards revealed and a hole played with the keyboard', async () => {
  const context = await browser.newContext({ locale: 'en-US', viewport: DESKTOP });
  const { page, errors } = await openPage(context);
  const { game, seat } = await createFromPreset(page, 'nine', '9-card');
  const created = await api('GET', `/v1/games/${game}`);
  assert.deepEqual(created.grid_shape, { rows: 3, columns: 3 });
  assert.equal(created.rules.initial_reveal, 3);
  const myGrid = page.getByTestId('my-grid');
  assert.equal(await myGrid.locator('.card').count(), 9);
  assert.equal(await page.getByTestId('grid-1').locator('.card').count(), 9);
  assert.match(await status(page), /Turn 3 of your cards face up/);
  assert.match(await page.getByTestId('rules').textContent(), /Grid: 3 × 3 \(9 cards\)/);
  await axe(page, 'table, 9 cards, reveal');

  // Three positions with the keyboard: two chosen, the third reveals them all.
  for (const position of [0, 1]) {
    await myGrid.locator('button.card').nth(position).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction((count) => document.querySelectorAll('[data-testid="my-grid"] .card.selected').length === count, position + 1);
  }
  const third = myGrid.getByRole('button', { name: /^Turn positions 1, 2(,)? and 3 face up/ });
  await third.focus();
  const revealed = page.waitForResponse((response) => response.url().endsWith('/moves'));
  await page.keyboard.press('Enter');
  assert.equal((await revealed).status(), 200);

  for (let turn = 0; turn < 30; turn += 1) {
    await page.waitForFunction(() => /Game over|Your turn: draw/.test(document.querySelector('[data-testid="status"]').textContent));
    if ((await status(page)).includes('Game over')) break;
    if (turn === 0) await axe(page, 'table, 9 cards, draw');
    await page.getByRole('button', { name: 'Draw from the stock' }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('drawn').waitFor();
    if (turn === 0) await axe(page, 'table, 9 cards, place');
    // A face-down card while there is one: the grid completes within six turns.
    await pressCard(page, (await myGrid.locator('button.card.back').count()) ? 'button.card.back' : 'button.card');
  }
  await page.waitForFunction(() => document.querySelector('[data-testid="status"]').textContent.includes('Game over'));
  const view = await api('GET', `/v1/games/${game}/view`, { token: seat.token });
  assert.equal(await page.getByTestId('last-hole').locator('.grid').first().locator('.card').count(), 9);
  assert.ok((await page.getByTestId('last-hole').textContent()).includes(`Score ${view.last_hole.scores[0]}`));
  await axe(page, 'table, 9 cards, game over');
  await page.screenshot({ path: join(OUT, 'table-9-cards.png'), fullPage: true });

  await page.getByTestId('open-replay').click();
  const verdict = page.getByTestId('verdict');
  await verdict.waitFor();
  assert.equal(await verdict.getAttribute('data-verified'), 'true', await page.getByTestId('check').textContent());
  // The board follows the verdict once the step's replay has arrived.
  const replayed = page.locator('.replay-board .player').first().locator('.grid .card');
  await replayed.first().waitFor();
  assert.equal(await replayed.count(), 9);
  await axe(page, 'replay, 9 cards');
  await context.close();
  assert.deepEqual(errors, []);
});

test('a 4-card game with knocking: the player knocks, hears it, and the hole ends by the knock', async () => {
  const context = await browser.newContext({ locale: 'en-US', viewport: DESKTOP });
  const { page, errors } = await openPage(context);
  const { game } = await createFromPreset(page, 'knock4', '4-card with knocking');
  const created = await api('GET', `/v1/games/${game}`);
  assert.deepEqual(created.grid_shape, { rows: 2, columns: 2 });
  assert.equal(created.rules.knock, true);
  assert.match(await page.getByTestId('rules').textContent(), new RegExp(en['rules.knock.on'].slice(0, 40)));
  assert.equal(await page.getByTestId('my-grid').locator('.card').count(), 4);

  await page.getByTestId('my-grid').locator('button.card').nth(0).click();
  const revealed = page.waitForResponse((response) => response.url().endsWith('/moves'));
  await page.getByTestId('my-grid').locator('button.card').nth(1).click();
  assert.equal((await revealed).status(), 200);

  const knock = page.getByRole('button', { name: en['move.knock'] });
  await page.waitForFunction(() => /Game over|Your turn: draw/.test(document.querySelector('[data-testid="status"]').textContent));
  assert.ok(!(await status(page)).includes('Game over'), 'the bot did not end the hole before the player\'s first turn');
  await knock.waitFor();
  await axe(page, 'table, 4 cards, knock offered');
  await knock.focus();
  const knocked = page.waitForResponse((response) => response.url().endsWith('/moves'));
  await page.keyboard.press('Enter');
  assert.equal((await knocked).status(), 200);

  await page.waitForFunction(() => document.querySelector('[data-testid="status"]').textContent.includes('Game over'));
  assert.equal(await page.getByTestId('last-hole').locator('h2').textContent(), en['table.last_hole.knock'].replace('{hole}', '1'));
  await page.waitForFunction((line) => document.getElementById('announcer').textContent.includes(line),
    en['announce.hole_ended.knock'].replace('{hole}', '1'));
  assert.ok((await page.locator('#announcer').textContent()).includes(en['announce.knocked'].replace('{name}', 'Vic')), 'the knock is announced');
  await axe(page, 'table, 4 cards, ended by a knock');
  await page.screenshot({ path: join(OUT, 'table-knock.png'), fullPage: true });

  const log = (await api('GET', `/v1/games/${game}/export`)).trimEnd().split('\n').map((line) => JSON.parse(line));
  assert.equal(log[0].data.format, 'golf-log/2');
  assert.ok(log.some((entry) => entry.type === 'knocked' && entry.data.seat === 0));
  assert.equal(log.find((entry) => entry.type === 'hole_ended').data.reason, 'knock');
  await page.getByTestId('open-replay').click();
  await page.getByTestId('verdict').waitFor();
  assert.equal(await page.getByTestId('verdict').getAttribute('data-verified'), 'true');
  await context.close();
  assert.deepEqual(errors, []);
});
