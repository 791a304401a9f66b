// "My games", the lobby's first panel while this browser is signed in: the account's games from
// /v1/account/games, those where it is the account's turn first, each with its turn deadline,
// loaded again whenever an account event arrives (a turn, a start, an end).

import { accountOf, call } from './api.js';
import { h, sayError } from './dom.js';
import { t } from './i18n.js';
import { summaryItem } from './profile.js';
import { accountRefused, onAccountEvent } from './turns.js';

// The most games with the account's turn listed at once, and the other games a page.
const YOUR_TURN_LIMIT = 100;
const PAGE = 20;

export function myGamesPanel(signal) {
  const list = h('ul', { class: 'games', 'data-testid': 'my-games' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, t('lobby.more_games'));
  const section = h('section', { class: 'panel', 'aria-labelledby': 'my-games-title' },
    h('h2', { id: 'my-games-title' }, t('my_games.title')),
    list, more);
  let loading = null;
  let stale = false;
  const reload = async () => {
    if (loading) {
      stale = true;
      return;
    }
    loading = (async () => {
      do {
        stale = false;
        await load(section, list, more);
      } while (stale && !signal.aborted);
    })();
    await loading;
    loading = null;
  };
  onAccountEvent(reload, signal);
  reload();
  return section;
}

async function load(section, list, more) {
  const account = accountOf();
  if (!account) return;
  try {
    const yours = await page(account, { turn: 'mine', limit: String(YOUR_TURN_LIMIT) });
    const first = await page(account, { limit: String(PAGE) });
    const shown = new Set(yours.games.map((game) => game.id));
    list.replaceChildren(...[...yours.games, ...first.games.filter((game) => !shown.has(game.id))]
      .map((game) => summaryItem(game, { own: true })));
    if (list.childElementCount === 0) list.append(h('li', { class: 'empty' }, t('my_games.none')));
    pageOn(list, more, account, shown, first.next_cursor);
  } catch (error) {
    if (error.status === 401) {
      accountRefused();
      section.hidden = true;
    } else {
      sayError(error, t('my_games.failed'));
    }
  }
}

// The "more" button: the next page of the other games, past those the list shows already.
function pageOn(list, more, account, shown, cursor) {
  more.hidden = !cursor;
  more.onclick = async () => {
    try {
      const next = await page(account, { limit: String(PAGE), cursor });
      list.append(...next.games.filter((game) => !shown.has(game.id)).map((game) => summaryItem(game, { own: true })));
      pageOn(list, more, account, shown, next.next_cursor);
    } catch (error) {
      sayError(error, t('my_games.failed'));
    }
  };
}

async function page(account, query) {
  const { body } = await call('GET', `/v1/account/games?${new URLSearchParams(query)}`, { token: account.token });
  return body;
}
