// The web client in each language, with the keyboard alone and axe-core: a hole played in French
// and one in English (Tab and Enter only), axe on the lobby, the table at every stage, the replay
// and every how-to-play screen, cards' accessible names against the view, the language switch
// remembered across a reload, the how-to-play offer on a first visit, and the layout on a phone
// and at 200% zoom. Screenshots: target/e2e/{lobby,table,help}-{en,fr}-{desktop,phone}.png.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import en from '../../web/lang-en.js';
import fr from '../../web/lang-fr.js';
import { api, axe, BASE, DESKTOP, launch, openPage, screenshots } from './support.mjs';

const CATALOGS = { en, fr };
const LOCALES = { en: 'en-US', fr: 'fr-FR' };
let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

// The catalog's string, filled as the page fills it (numbers formatted for the language).
function say(lang, key, params = {}) {
  let text = CATALOGS[lang][key];
  if (typeof text === 'object') text = text[new Intl.PluralRules(lang).select(params.count)] ?? text.other;
  return text.replace(/\{(\w+)\}/g, (whole, name) => {
    const value = params[name];
    return typeof value === 'number' ? new Intl.NumberFormat(lang).format(value) : String(value);
  });
}

// What the page must call a card of the view: its rank and suit, or face down.
function cardName(lang, code) {
  if (!code) return say(lang, 'card.face_down');
  return say(lang, 'card.name', { rank: say(lang, `rank.${code.slice(0, -1)}`), suit: say(lang, `suit.${code.slice(-1)}`) });
}

// A fresh browser context whose languages are `lang`'s, as a visitor from there has.
async function visitor(lang) {
  const context = await browser.newContext({ locale: LOCALES[lang], viewport: DESKTOP });
  return { context, ...(await openPage(context)) };
}

// Moves the focus with Tab, from wherever it is, to the control named `name` (a string or a
// pattern) and presses Enter: what a keyboard user does.
async function press(page, name) {
  const matches = (text) => (typeof name === 'string' ? text === name : name.test(text));
  for (let tab = 0; tab < 120; tab += 1) {
    const focused = await page.evaluate(() => {
      const element = document.activeElement;
      return element ? (element.getAttribute('aria-label') || element.textContent).trim() : '';
    });
    if (matches(focused)) {
      await page.keyboard.press('Enter');
      return;
    }
    await page.keyboard.press('Tab');
  }
  assert.fail(`no control named ${name} within reach of the Tab key`);
}

const status = (page) => page.getByTestId('status').textContent();
const until = (page, test, arg) => page.waitForFunction(test, arg);
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// A catalog string with its placeholders as wildcards, as a pattern.
const pattern = (lang, key, form = 'other') => {
  const text = typeof CATALOGS[lang][key] === 'object' ? CATALOGS[lang][key][form] : CATALOGS[lang][key];
  return new RegExp(`^${text.split(/\{\w+\}/).map(escape).join('.*')}$`);
};

// The names a screen reader hears for the cards of a grid, in position order. One snapshot in a
// loaded CI run came back empty although the status already showed the draw stage, so the grid is
// read again until it names the expected cards, for at most five seconds.
async function assertHeardNames(grid, expected) {
  let snapshot = '';
  for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
    snapshot = await grid.ariaSnapshot();
    const names = [...snapshot.matchAll(/- (?:img|button) "([^"]*)"/g)].map((match) => match[1]);
    if (names.length === expected.length && names.every((name, index) => name === expected[index])) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`the grid is heard as\n${snapshot}\nnot as ${expected.join(', ')}`);
}

for (const lang of ['fr', 'en']) {
  test(`a hole played with the keyboard alone in ${lang}, axe on the lobby, every stage of the table, the replay and how to play`, async () => {
    const { context, page, errors } = await visitor(lang);
    await page.goto(`${BASE}/`);
    await page.getByRole('heading', { level: 1, name: say(lang, 'lobby.title') }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), lang, 'the browser\'s language is the page\'s');
    await page.getByTestId('offer-help').waitFor();
    await axe(page, `lobby (${lang})`);
    await screenshots(page, `lobby-${lang}`);

    // The lobby's form with the keyboard: type into the fields, choose with the arrow keys.
    await page.getByLabel(say(lang, 'form.name')).focus();
    await page.keyboard.type(lang === 'fr' ? 'Zoé' : 'Zoe');
    await page.locator('select[name="seats"]').selectOption('2');
    await page.locator('select[name="bots"]').selectOption('0');
    await page.locator('input[name="holes"]').fill('1');
    await page.getByLabel(say(lang, 'rules.flip_after_discard')).selectOption('optional');
    await page.getByRole('button', { name: say(lang, 'lobby.create') }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('invitation').waitFor();
    const game = decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
    const seat = await page.evaluate((id) => JSON.parse(localStorage.getItem(`golf.seat.${id}`)), game);
    assert.match(await status(page), pattern(lang, 'status.waiting'));
    await axe(page, `table, waiting (${lang})`);

    await press(page, say(lang, 'table.seat_bot'));
    await until(page, () => document.querySelector('[data-testid="my-grid"] button.card'));
    assert.match(await status(page), new RegExp(escape(say(lang, 'status.reveal_yours', { count: 2 }))));
    await axe(page, `table, reveal (${lang})`);
    await press(page, say(lang, 'table.card_action', { action: say(lang, 'move.choose', { position: 1 }), card: cardName(lang, null) }));
    await press(page, new RegExp(`^${escape(say(lang, 'move.reveal', { positions: new Intl.ListFormat(lang, { type: 'conjunction' }).format(['1', '2']), count: 2 }))}`));

    // The cards' names are the view's cards, in the page's language.
    const drawText = say(lang, 'status.yours.draw');
    await until(page, (text) => document.querySelector('[data-testid="status"]').textContent.includes(text), drawText);
    const view = await api('GET', `/v1/games/${game}/view`, { token: seat.token });
    await assertHeardNames(page.getByTestId('grid-1'), view.players[1].grid.map((code) => cardName(lang, code)));
    assert.equal(await page.getByTestId('grid-1').getByRole('img', { name: cardName(lang, view.players[1].grid[0]), exact: true }).count() >= 1, true);
    await axe(page, `table, draw (${lang})`);
    await screenshots(page, `table-${lang}`);

    const over = say(lang, 'status.game_over', { count: 1, names: '' }).split('.')[0];
    for (let turn = 0; turn < 40; turn += 1) {
      await until(page, ([draw, end]) => {
        const text = document.querySelector('[data-testid="status"]').textContent;
        return text.includes(draw) || text.includes(end);
      }, [drawText, over]);
      if ((await status(page)).includes(over)) break;
      await press(page, say(lang, 'move.draw_stock'));
      await page.getByTestId('drawn').waitFor();
      if (turn === 0) await axe(page, `table, place (${lang})`);
      if (turn < 2) {
        await press(page, say(lang, 'move.discard'));
        await page.getByRole('button', { name: say(lang, 'move.pass') }).waitFor();
        if (turn === 0) {
          await axe(page, `table, flip (${lang})`);
          await press(page, say(lang, 'move.pass'));
          continue;
        }
        await press(page, new RegExp(`${escape(cardName(lang, null))}\\)$`));
        continue;
      }
      // Place the drawn card on a face-down card while there is one, which ends the hole soon.
      const faceDown = await page.getByTestId('my-grid').locator('button.card.back').count();
      await press(page, faceDown
        ? new RegExp(`${escape(cardName(lang, null))}\\)$`)
        : new RegExp(`^${escape(say(lang, 'move.swap', { position: 1 }))}`));
    }
    await until(page, (end) => document.querySelector('[data-testid="status"]').textContent.includes(end), over);
    const announced = await page.locator('#announcer').textContent();
    assert.ok(announced.includes(say(lang, 'announce.game_ended')) || announced.includes(over), `the end is announced: ${announced}`);
    await axe(page, `table, game over (${lang})`);

    await press(page, say(lang, 'table.open_replay'));
    await page.getByTestId('verdict').waitFor();
    assert.equal(await page.getByTestId('verdict').textContent(), say(lang, 'check.passed'));
    await axe(page, `replay (${lang})`);

    // How to play, with this game's options.
    await page.goto(`${BASE}/#/game/${game}`);
    await press(page, say(lang, 'table.how_to_play'));
    await page.getByRole('heading', { level: 1, name: say(lang, 'help.title') }).waitFor();
    const screens = ['grid', 'turn', 'scoring', 'options', 'more'];
    for (const [index, screen] of screens.entries()) {
      await page.getByRole('heading', { level: 2, name: say(lang, `help.${screen}.title`) }).waitFor();
      assert.equal(await page.getByTestId('help-position').textContent(), say(lang, 'help.position', { screen: index + 1, count: screens.length }));
      if (screen === 'scoring') {
        const scores = await page.getByTestId('example').locator('[data-score]').allTextContents();
        assert.deepEqual(scores, [33, 3, -6].map((score) => say(lang, 'help.scoring.score', { score })));
        await screenshots(page, `help-${lang}`);
      }
      if (screen === 'options') {
        assert.match(await page.getByTestId('rules').textContent(), new RegExp(escape(say(lang, 'rules.flip_after_discard.optional'))));
      }
      await axe(page, `how to play, ${screen} (${lang})`);
      if (index < screens.length - 1) await press(page, say(lang, 'help.next'));
    }
    const rules = await fetch(new URL(await page.getByTestId('full-rules').getAttribute('href'), BASE));
    assert.equal(rules.status, 200);
    assert.match(await rules.text(), /^# The rules of six-card Golf/);
    await context.close();
    assert.deepEqual(errors, []);
  });
}

test('the language switch is remembered across a reload, and how to play is offered once', async () => {
  const { context, page, errors } = await visitor('en');
  await page.goto(`${BASE}/`);
  await page.getByRole('heading', { level: 1, name: en['lobby.title'] }).waitFor();
  await page.getByTestId('offer-help').waitFor();
  await page.getByLabel(en['nav.language']).selectOption('fr');
  await page.getByRole('heading', { level: 1, name: fr['lobby.title'] }).waitFor();
  await page.reload();
  await page.getByRole('heading', { level: 1, name: fr['lobby.title'] }).waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'fr');
  assert.equal(await page.title(), fr['app.name']);
  await page.getByRole('heading', { level: 2, name: fr['lobby.open_games'] }).waitFor();
  await page.locator('.games li').first().waitFor();
  assert.equal(await page.getByTestId('offer-help').isVisible(), false, 'the offer is made once');
  await page.getByLabel(fr['nav.language']).selectOption('en');
  await page.getByRole('heading', { level: 1, name: en['lobby.title'] }).waitFor();
  await context.close();
  assert.deepEqual(errors, []);
});

test('a problem is explained in the page\'s language, with the server\'s detail', async () => {
  const { context, page, errors } = await visitor('fr');
  const full = await api('POST', '/v1/games', { body: { seats: 2, holes: 1 } });
  await page.goto(`${BASE}/#/game/${full.id}`);
  await page.getByLabel(fr['form.name']).fill('   ');
  await page.getByRole('button', { name: fr['table.take_seat'] }).click();
  await page.getByTestId('problem-detail').waitFor();
  const refused = await api('POST', `/v1/games/${full.id}/players`, { body: { name: '   ' }, expect: 422 });
  assert.equal(await page.getByTestId('problem-detail').textContent(), refused.detail);
  assert.equal(await page.getByTestId('problem-detail').getAttribute('lang'), 'en', 'the detail is marked as English');
  assert.ok((await page.locator('#message').textContent()).startsWith(fr[`problem.${refused.code}`]));
  await context.close();
  assert.deepEqual(errors.filter((error) => !error.includes('status of 422')), []);
});
