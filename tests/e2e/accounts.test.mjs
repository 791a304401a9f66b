// The web client with accounts, in three browser contexts (three devices): Ada signs up and lets
// the page notify her, Bob signs in with a token made through the API, and Ada's second device
// signs in with the token copied from her first. A game created as Ada's account and joined as
// Bob's is listed in My games with "your turn" first and its deadline, played to its end from
// both accounts, and each turn that comes in a game not on screen is said: by a Notification for
// Ada (window.Notification wrapped by an init script records each one made), by a notice in the
// page for Bob, who did not allow them. Then the profile, and signing out. axe on every new page.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { api, axe, BASE, DESKTOP, launch, OUT, openPage, screenshots } from './support.mjs';

let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

// Runs before the page's scripts: every Notification the page makes is recorded in
// window.notifications.
function recordNotifications() {
  window.notifications = [];
  const Real = window.Notification;
  window.Notification = class extends Real {
    constructor(title, options) {
      super(title, options);
      window.notifications.push({ title, body: options?.body, tag: options?.tag });
    }
  };
}

// A device: a browser context of its own (its own localStorage), notifications allowed or not.
async function device(allowNotifications) {
  const context = await browser.newContext({ locale: 'en-US', viewport: DESKTOP });
  if (allowNotifications) await context.grantPermissions(['notifications'], { origin: BASE });
  await context.addInitScript(recordNotifications);
  const opened = await openPage(context);
  return { ...opened, context };
}

const unique = (name) => `${name}-${Date.now().toString(36)}${Math.floor(Math.random() * 1000)}`;
const notifications = (page) => page.evaluate(() => window.notifications);
const gameOf = (page) => decodeURIComponent(new URL(page.url()).hash.split('/')[2]);

async function signInWithToken(page, token) {
  await page.goto(`${BASE}/#/account`);
  await page.getByLabel('Account token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('account').waitFor();
}

// The initial reveal: the cards at positions 1 and 4 (the second of each row).
async function reveal(page) {
  const grid = page.getByTestId('my-grid');
  await grid.locator('button.card').nth(1).click();
  const revealed = page.waitForResponse((response) => response.url().endsWith('/moves'));
  await grid.locator('button.card').nth(4).click();
  assert.equal((await revealed).status(), 200);
}

// A turn: draw from the stock and place the card on a face-down one, which ends the hole soon.
async function playTurn(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid="status"]')?.textContent.includes('Your turn: draw'));
  const drawn = page.waitForResponse((response) => response.url().endsWith('/moves'));
  await page.getByRole('button', { name: 'Draw from the stock' }).click();
  assert.equal((await drawn).status(), 200);
  const grid = page.getByTestId('my-grid');
  await grid.locator('button.card').first().waitFor();
  const faceDown = grid.locator('button.card.back');
  const placed = page.waitForResponse((response) => response.url().endsWith('/moves'));
  await ((await faceDown.count()) > 0 ? faceDown : grid.locator('button.card')).first().click();
  assert.equal((await placed).status(), 200);
}

test('two accounts play a game: My games puts "your turn" first, and turns elsewhere are notified', async () => {
  const adaName = unique('ada');
  const ada = await device(true);
  await ada.page.goto(`${BASE}/#/account`);
  await ada.page.getByRole('heading', { name: 'Sign up' }).waitFor();
  await axe(ada.page, 'account-signed-out');
  await ada.page.getByRole('textbox', { name: /^Username/ }).fill(adaName);
  await ada.page.getByRole('textbox', { name: /^Display name/ }).fill('Ada <b>');
  await ada.page.getByRole('button', { name: 'Create my account' }).click();
  await ada.page.getByTestId('account').waitFor();
  assert.match(await ada.page.getByTestId('account').textContent(), new RegExp(`Signed in as ${adaName}\\.`));
  assert.match(await ada.page.getByTestId('notifications').textContent(), /Notifications are on/);
  await ada.page.getByRole('button', { name: 'Show' }).click();
  const adaToken = await ada.page.getByTestId('account-token').inputValue();
  const kept = await ada.page.evaluate(() => JSON.parse(localStorage.getItem('golf.account')));
  assert.equal(kept.token, adaToken, 'the token shown is the one this browser keeps');
  assert.equal((await api('GET', '/v1/account', { token: adaToken })).display_name, 'Ada <b>');
  await axe(ada.page, 'account-signed-in');
  await screenshots(ada.page, 'account');

  const bobName = unique('bob');
  const bobAccount = await api('POST', '/v1/accounts', { body: { username: bobName, display_name: 'Bob' } });
  const bob = await device(false);
  await signInWithToken(bob.page, bobAccount.token);

  // Ada creates a game as her account, with a day to play each turn, and goes back to the lobby.
  await ada.page.getByRole('link', { name: 'Lobby' }).click();
  await ada.page.getByTestId('my-games').getByText('No game yet').waitFor();
  assert.equal(await ada.page.getByLabel('Your name').inputValue(), 'Ada <b>', 'the name is the display name');
  await ada.page.locator('select[name="seats"]').selectOption('2');
  await ada.page.locator('select[name="bots"]').selectOption('0');
  await ada.page.locator('input[name="holes"]').fill('1');
  await ada.page.getByLabel('Time to play').selectOption('86400');
  await ada.page.getByRole('button', { name: 'Create and sit down' }).click();
  await ada.page.waitForURL(/#\/game\//);
  const game = gameOf(ada.page);
  await ada.page.getByTestId('invitation').waitFor();
  const joins = (await api('GET', `/v1/games/${game}/events`)).events.filter((entry) => entry.type === 'player_joined');
  assert.deepEqual(joins.map((entry) => entry.data.account), [adaName], 'the seat is bound to the account');
  await ada.page.getByRole('link', { name: 'Lobby' }).click();
  const adaGames = ada.page.getByTestId('my-games');
  await adaGames.locator(`[data-game="${game}"]`).getByText('1 of 2 seats taken').waitFor();

  // Bob joins through the invitation as his account; the game starts, and the turn (the initial
  // reveal) comes to Ada in a game she is not looking at.
  await bob.page.goto(`${BASE}/#/game/${game}`);
  await bob.page.getByText(`You join as your account ${bobName}`).waitFor();
  await bob.page.getByRole('button', { name: 'Take a seat' }).click();
  await bob.page.getByTestId('my-grid').waitFor();
  await ada.page.waitForFunction(() => window.notifications.length > 0);
  const [told] = await notifications(ada.page);
  assert.equal(told.title, 'Your turn');
  assert.equal(told.tag, game);
  assert.match(told.body, new RegExp(`^It is your turn in game ${game.slice(0, 8)}; play by `));

  // A newer game of Ada's where it is not her turn: "your turn" still comes first.
  const other = await api('POST', '/v1/games', { body: { seats: 2, holes: 1 }, token: adaToken });
  await api('POST', `/v1/games/${other.id}/players`, { body: {}, token: adaToken });
  await ada.page.reload();
  await adaGames.locator('li').nth(1).waitFor();
  assert.deepEqual(await adaGames.locator('li').evaluateAll((items) => items.map((item) => [item.dataset.game, item.dataset.yourTurn])),
    [[game, 'true'], [other.id, 'false']]);
  const first = adaGames.locator('li').first();
  assert.match(await first.textContent(), /^Your turn · 1 hole · turn ends .*Players: Ada <b> \(0\), Bob \(0\)/);
  assert.equal(await first.getByRole('link', { name: 'Bob' }).getAttribute('href'), `#/player/${bobName}`);
  await axe(ada.page, 'lobby-my-games');
  await screenshots(ada.page, 'my-games');

  // Ada's first device opens the game; her second one, signed in with the token she copied,
  // makes her reveal with the account's token alone (it holds no seat token).
  await first.getByRole('link', { name: 'Play' }).click();
  await ada.page.getByTestId('my-grid').waitFor();
  const phone = await device(false);
  await signInWithToken(phone.page, adaToken);
  await phone.page.getByRole('link', { name: 'Your games' }).click();
  await phone.page.getByTestId('my-games').locator(`[data-game="${game}"]`).getByRole('link', { name: 'Play' }).click();
  await reveal(phone.page);
  assert.equal(await phone.page.evaluate((id) => localStorage.getItem(`golf.seat.${id}`), game), null, 'no seat token on the phone');
  await ada.page.waitForFunction(() => document.querySelectorAll('[data-testid="my-grid"] .card:not(.back)').length === 2);
  await reveal(bob.page);

  // The hole, turn by turn. Bob waits in the lobby for his first turn, which a notice brings.
  let bobAway = false;
  for (let turn = 0; turn < 20; turn += 1) {
    const view = await api('GET', `/v1/games/${game}/view`, { token: adaToken });
    if (view.status === 'finished') break;
    if (view.current_seat === view.you) {
      if (!bobAway && turn < 2) {
        await bob.page.getByRole('link', { name: 'Lobby' }).click();
        await bob.page.getByTestId('my-games').locator(`[data-game="${game}"]`).waitFor();
        bobAway = true;
      }
      await playTurn(ada.page);
    } else {
      if (bobAway) {
        const notice = bob.page.getByTestId('turns').locator(`[data-game="${game}"]`);
        await notice.waitFor();
        assert.match(await notice.textContent(), new RegExp(`It is your turn in game ${game.slice(0, 8)}; play by `));
        await axe(bob.page, 'lobby-turn-notice');
        await bob.page.screenshot({ path: join(OUT, 'turn-notice.png') });
        await notice.getByRole('link', { name: 'Open the game' }).click();
        await bob.page.getByTestId('my-grid').waitFor();
        assert.equal(await bob.page.getByTestId('turns').isHidden(), true, 'the notice goes once the game is open');
        bobAway = null;
      }
      await playTurn(bob.page);
    }
  }
  assert.equal(bobAway, null, 'Bob was brought back by a notice');
  for (const { page } of [ada, bob]) {
    await page.waitForFunction(() => document.querySelector('[data-testid="status"]')?.textContent.includes('Game over'));
  }
  assert.deepEqual(await notifications(ada.page), [], 'no notification for the game on screen');
  assert.deepEqual(await notifications(bob.page), [], 'Bob did not allow notifications');

  // The profile counts the game; signing out forgets the account and its seats here.
  await bob.page.goto(`${BASE}/#/player/${adaName}`);
  await bob.page.getByRole('heading', { level: 1, name: 'Ada <b>' }).waitFor();
  assert.match(await bob.page.getByTestId('profile').textContent(), /1 game played/);
  await bob.page.locator(`[data-game="${game}"]`).getByRole('link', { name: 'Replay' }).waitFor();
  await axe(bob.page, 'profile');
  await ada.page.getByRole('link', { name: 'Account' }).click();
  await ada.page.getByRole('button', { name: 'Sign out' }).click();
  await ada.page.getByRole('heading', { name: 'Sign up' }).waitFor();
  assert.deepEqual(await ada.page.evaluate((id) => [localStorage.getItem('golf.account'), localStorage.getItem(`golf.seat.${id}`)], game), [null, null]);

  for (const person of [ada, bob, phone]) {
    await person.context.close();
    assert.deepEqual(person.errors, []);
  }
});
