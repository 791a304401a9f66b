// The web client's opponents: the leaderboard (paged by its cursor) and a profile's rating chart
// after rated games two accounts forfeit to the greedy bot; a rated game against a bot created from the lobby,
// played to its finished table, then a rematch from that table, which starts at once (only a bot
// to ask) and takes the player to the new table; and a challenge between two browser contexts,
// received and accepted live, which takes both players to the game it starts; a quick game the
// bots join after the wait, played and rematched; two players' quick games matched together, after
// one stopped and restarted its search. axe on every new page.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, axe, BASE, DESKTOP, launch, openPage, screenshots } from './support.mjs';

let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

async function device() {
  const context = await browser.newContext({ locale: 'en-US', viewport: DESKTOP });
  const opened = await openPage(context);
  return { ...opened, context };
}

const unique = (name) => `${name}-${Date.now().toString(36)}${Math.floor(Math.random() * 1000)}`;
const gameOf = (page) => decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
const statusText = (page) => page.getByTestId('status').textContent();

async function signInWithToken(page, token) {
  await page.goto(`${BASE}/#/account`);
  await page.getByLabel('Account token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('account').waitFor();
}

// A rated one-hole game of `player` against the greedy bot, which the player leaves at once: a
// forfeit, so the player loses whatever the bot then scores for its seat, and the game's end
// applied to the player's rating (by the server's ratings job, just after the game ends). The
// bot's own rating is an anchor that no game moves.
async function forfeitedRatedGame(player) {
  const game = await api('POST', '/v1/games', { body: { seats: 2, holes: 1, rated: true }, token: player.token });
  await api('POST', `/v1/games/${game.id}/players`, { body: {}, token: player.token });
  await api('POST', `/v1/games/${game.id}/players`, { body: { name: 'Greedy', bot: 'greedy' }, token: player.token });
  await api('POST', `/v1/games/${game.id}/leave`, { token: player.token });
  for (let tries = 0; tries < 100; tries += 1) {
    const { history } = await api('GET', `/v1/accounts/${player.username}/ratings?limit=1`);
    if (history.at(-1)?.game_id === game.id) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`the rated game ${game.id} was not applied to the ratings within 5 s`);
}

// Plays the player's seat of a one-hole game to its end: the initial reveal (two cards chosen,
// one move), then each turn a draw from the stock placed on a face-down card.
async function playToTheEnd(page) {
  const grid = page.getByTestId('my-grid');
  await grid.locator('button.card').nth(1).click();
  const revealed = page.waitForResponse((response) => response.url().endsWith('/moves'));
  await grid.locator('button.card').nth(4).click();
  assert.equal((await revealed).status(), 200);
  for (let turn = 0; turn < 60; turn += 1) {
    await page.waitForFunction(() => /Your turn: draw|Game over/.test(document.querySelector('[data-testid="status"]')?.textContent));
    if ((await statusText(page)).includes('Game over')) return;
    const drawn = page.waitForResponse((response) => response.url().endsWith('/moves'));
    await page.getByRole('button', { name: 'Draw from the stock' }).click();
    assert.equal((await drawn).status(), 200);
    const faceDown = grid.locator('button.card.back');
    const placed = page.waitForResponse((response) => response.url().endsWith('/moves'));
    await ((await faceDown.count()) > 0 ? faceDown : grid.locator('button.card')).first().click();
    assert.equal((await placed).status(), 200);
  }
  assert.fail('the hole did not end in 60 turns');
}

test('the leaderboard pages through the established ratings, and a profile charts its rating', async () => {
  // Two accounts lose rated games to the greedy bot until both ratings are established (about a
  // dozen games each).
  const players = [];
  for (const display of ['Lea', 'Lou']) {
    const username = unique(display.toLowerCase());
    const { token } = await api('POST', '/v1/accounts', { body: { username, display_name: display } });
    players.push({ username, display, token });
  }
  let board;
  for (let games = 0; games < 30; games += 1) {
    for (const player of players) await forfeitedRatedGame(player);
    board = await api('GET', '/v1/leaderboard');
    const listed = board.accounts.map((entry) => entry.username);
    if (players.every((player) => listed.includes(player.username))) break;
  }
  const listed = board.accounts.map((entry) => entry.username);
  assert.ok(players.every((player) => listed.includes(player.username)), `both are established: ${listed}`);

  const { page, context, errors } = await device();
  // A page of one player, so that the cursor is followed on this small board.
  await page.route(/\/v1\/leaderboard\?/, (route) => route.continue({ url: route.request().url().replace('limit=50', 'limit=1') }));
  await page.goto(`${BASE}/#/leaderboard`);
  const rows = page.getByTestId('leaderboard').locator('tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 1);
  // A full page has a cursor, which may lead to an empty page: "More players" goes with it.
  const more = page.getByRole('button', { name: 'More players' });
  for (let pages = 1; await more.isVisible(); pages += 1) {
    assert.ok(pages <= board.accounts.length, 'no more pages than players');
    await more.click();
    await page.waitForFunction(() => {
      const button = document.querySelector('[data-testid="leaderboard-more"]');
      return button.hidden || !button.disabled;
    });
  }
  const ranks = await rows.evaluateAll((items) => items.map((row) => [row.cells[0].textContent, row.dataset.username]));
  assert.deepEqual(ranks, board.accounts.map((entry) => [String(entry.rank), entry.username]));
  const [lea] = players;
  const leaRated = board.accounts.find((entry) => entry.username === lea.username);
  const leaRow = page.getByTestId('leaderboard').locator(`tr[data-username="${lea.username}"]`);
  assert.equal(await leaRow.locator('td').nth(1).textContent(),
    `${Math.round(leaRated.rating.value).toLocaleString('en-US')} ± ${Math.round(leaRated.rating.deviation)}`);
  await axe(page, 'leaderboard');
  await screenshots(page, 'leaderboard');

  // Lea's profile: her rating, and a chart whose line falls (she forfeits every game), one point
  // before the first game and one after each.
  await leaRow.getByRole('link', { name: lea.display }).click();
  const chart = page.getByTestId('rating-chart');
  await chart.waitFor();
  const { history } = await api('GET', `/v1/accounts/${lea.username}/ratings`);
  assert.match(await page.getByTestId('rating-now').textContent(), new RegExp(`rated games$`));
  const shown = (rating) => Math.round(rating.value).toLocaleString('en-US');
  assert.equal(await chart.getAttribute('aria-label'),
    `Rating over ${history.length} rated games: from ${shown(history[0].before)} to ${shown(history[history.length - 1].after)}`);
  const heights = await chart.locator('circle').evaluateAll((points) => points.map((point) => Number(point.getAttribute('cy'))));
  assert.equal(heights.length, history.length + 1);
  assert.ok(heights[heights.length - 1] > heights[0], `the line falls: ${heights}`);
  await page.getByText('The figures of each rated game').click();
  assert.equal(await page.getByTestId('rating-history').locator('tbody tr').count(), history.length);
  await axe(page, 'profile-rating');
  await screenshots(page, 'rating-chart');
  await context.close();
  assert.deepEqual(errors, []);
});

test('a rated game against a bot, played to its end, then a rematch from the finished table', async () => {
  const name = unique('rae');
  const account = await api('POST', '/v1/accounts', { body: { username: name, display_name: 'Rae' } });
  const { page, context, errors } = await device();
  await signInWithToken(page, account.token);
  await page.getByRole('link', { name: 'Lobby' }).click();
  await page.locator('select[name="seats"]').selectOption('2');
  await page.locator('select[name="bots"]').selectOption('1');
  await page.locator('input[name="holes"]').fill('1');
  await page.getByLabel('Rated (accounts and bots only)').check();
  await page.getByRole('button', { name: 'Create and sit down' }).click();
  await page.waitForURL(/#\/game\//);
  const game = gameOf(page);
  await page.getByTestId('my-grid').waitFor();
  const created = (await api('GET', `/v1/games/${game}/events`)).events[0];
  assert.equal(created.data.rated, true, 'the game is rated');

  await playToTheEnd(page);
  const rematch = page.getByRole('button', { name: 'Rematch' });
  await rematch.waitFor();
  await axe(page, 'finished-table-rematch');
  await rematch.click();
  await page.waitForURL((url) => url.hash.startsWith('#/game/') && !url.hash.endsWith(game));
  const again = gameOf(page);
  await page.getByTestId('my-grid').waitFor();
  const view = await api('GET', `/v1/games/${again}/view`, { token: account.token });
  assert.equal(view.status, 'playing', 'the rematch started at once');
  assert.equal(view.holes, 1);
  assert.equal(view.players.length, 2);
  assert.equal((await api('GET', `/v1/games/${again}/events`)).events[0].data.rated, true, 'the rematch is rated too');

  // The finished game rated Rae (when the service applied it): her profile says so, with a chart
  // of two points.
  while ((await api('GET', `/v1/accounts/${name}/ratings`)).history.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await page.goto(`${BASE}/#/player/${name}`);
  await page.getByTestId('rating-chart').waitFor();
  assert.match(await page.getByTestId('rating-now').textContent(), /\(provisional\) · 1 rated game$/);
  assert.equal(await page.getByTestId('rating-chart').locator('circle').count(), 2);
  await context.close();
  assert.deepEqual(errors, []);
});

test('a challenge from one browser to another is received live, accepted, and opens the game on both', async () => {
  const adaName = unique('ada');
  const bobName = unique('bob');
  const adaAccount = await api('POST', '/v1/accounts', { body: { username: adaName, display_name: 'Ada' } });
  const bobAccount = await api('POST', '/v1/accounts', { body: { username: bobName, display_name: 'Bob' } });
  const ada = await device();
  const bob = await device();
  await signInWithToken(ada.page, adaAccount.token);
  await signInWithToken(bob.page, bobAccount.token);
  await bob.page.getByRole('link', { name: 'Challenges' }).click();
  await bob.page.getByTestId('challenges-received').getByText('No open challenge to you.').waitFor();

  // Ada finds Bob's profile and challenges him from it.
  await ada.page.goto(`${BASE}/#/player/${bobName}`);
  await ada.page.getByRole('link', { name: 'Challenge Bob' }).click();
  assert.equal(await ada.page.getByLabel('Players’ usernames').inputValue(), bobName);
  await ada.page.locator('input[name="holes"]').fill('2');
  await ada.page.getByRole('button', { name: 'Send the challenge' }).click();
  const sent = ada.page.getByTestId('challenges-sent').locator('li[data-challenge]');
  await sent.waitFor();
  assert.match(await sent.textContent(), new RegExp(`^To ${bobName}2 holes.*${bobName} has not answered`));
  await axe(ada.page, 'challenges-sent');

  // Bob's page, left open, shows it as it comes.
  const received = bob.page.getByTestId('challenges-received').locator('li[data-challenge]');
  await received.waitFor();
  assert.match(await received.textContent(), new RegExp(`^From ${adaName}2 holes`));
  await axe(bob.page, 'challenges-received');
  await screenshots(bob.page, 'challenges');
  await received.getByRole('button', { name: 'Accept' }).click();

  for (const { page } of [ada, bob]) {
    await page.waitForURL(/#\/game\//);
    await page.getByTestId('my-grid').waitFor();
  }
  const game = gameOf(ada.page);
  assert.equal(gameOf(bob.page), game, 'both are at the same table');
  const view = await api('GET', `/v1/games/${game}/view`, { token: adaAccount.token });
  assert.deepEqual(view.players.map((player) => [player.seat, player.name]), [[0, 'Ada'], [1, 'Bob']]);
  assert.equal(view.holes, 2);
  assert.deepEqual((await api('GET', '/v1/account/challenges', { token: bobAccount.token })).challenges, []);

  for (const person of [ada, bob]) {
    await person.context.close();
    assert.deepEqual(person.errors, []);
  }
});

test('a quick game against the bots after the wait, played to its end, then a rematch', async () => {
  const name = unique('quinn');
  const account = await api('POST', '/v1/accounts', { body: { username: name, display_name: 'Quinn' } });
  const { page, context, errors } = await device();
  await signInWithToken(page, account.token);
  await page.getByRole('link', { name: 'Lobby' }).click();
  const quick = page.getByTestId('quick-game');
  // One rated hole: the other quick game here seeks twelve unrated ones, so only the bots come.
  await quick.locator('input[name="seek-holes"]').fill('1');
  await quick.locator('select[name="seek-bots"]').selectOption('5');
  await quick.getByLabel('Rated').check();
  await quick.getByRole('button', { name: 'Quick game' }).click();
  const waiting = page.getByTestId('seek-waiting');
  await waiting.waitFor();
  assert.match(await waiting.textContent(), /^Looking for players… \d+ seconds? so far\.$/);
  assert.match(await quick.textContent(), /Bots take the free seats in \d+ seconds?\./);
  await axe(page, 'quick-game-waiting');

  await page.waitForURL(/#\/game\//, { timeout: 20000 });
  const game = gameOf(page);
  await page.getByTestId('my-grid').waitFor();
  const view = await api('GET', `/v1/games/${game}/view`, { token: account.token });
  assert.deepEqual(view.players.map((player) => [player.name, player.bot]), [['Quinn', null], ['Bot', 'greedy']]);
  assert.equal((await api('GET', `/v1/games/${game}/events`)).events[0].data.rated, true, 'the game is rated');
  const events = (await api('GET', '/v1/account/events', { token: account.token })).events;
  assert.ok(events.some((event) => event.type === 'seek_matched' && event.game_id === game), 'seek_matched');

  await playToTheEnd(page);
  await page.getByRole('button', { name: 'Rematch' }).click();
  await page.waitForURL((url) => url.hash.startsWith('#/game/') && !url.hash.endsWith(game));
  await page.getByTestId('my-grid').waitFor();
  await context.close();
  assert.deepEqual(errors, []);
});

test('two players seeking the same game at once are seated together; a search can be stopped', async () => {
  const people = [];
  for (const display of ['Nia', 'Oto']) {
    const account = await api('POST', '/v1/accounts', { body: { username: unique(display.toLowerCase()), display_name: display } });
    const person = { account, ...(await device()) };
    await signInWithToken(person.page, account.token);
    await person.page.getByRole('link', { name: 'Lobby' }).click();
    people.push(person);
  }
  const [nia, oto] = people;
  const seek = async ({ page }) => {
    const quick = page.getByTestId('quick-game');
    await quick.locator('input[name="seek-holes"]').fill('12');
    await quick.locator('select[name="seek-bots"]').selectOption('0');
    await quick.getByRole('button', { name: 'Quick game' }).click();
  };
  // Nia looks, thinks better of it, and looks again: the stopped search matches no one.
  await seek(nia);
  await nia.page.getByTestId('seek-waiting').waitFor();
  await nia.page.getByRole('button', { name: 'Stop looking' }).click();
  await nia.page.getByText('You stopped looking for a game.').waitFor();
  await seek(nia);
  await nia.page.getByTestId('seek-waiting').waitFor();
  await seek(oto);
  for (const { page } of people) {
    await page.waitForURL(/#\/game\//);
    await page.getByTestId('my-grid').waitFor();
  }
  const game = gameOf(nia.page);
  assert.equal(gameOf(oto.page), game, 'both are at the same table');
  const view = await api('GET', `/v1/games/${game}/view`, { token: nia.account.token });
  assert.deepEqual(view.players.map((player) => player.name), ['Nia', 'Oto']);
  assert.equal(view.holes, 12);
  for (const person of people) {
    await person.context.close();
    assert.deepEqual(person.errors, []);
  }
});
