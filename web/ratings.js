// Ratings as the page shows them: the leaderboard (#/leaderboard, from /v1/leaderboard, a page at
// a time by its cursor), a rating in a few words, and a player's rating history
// (/v1/accounts/{username}/ratings) drawn as a small SVG line chart by this module (no library):
// the rating after each rated game, with a band of one deviation around it.

import { call } from './api.js';
import { h, replace, sayError } from './dom.js';
import { formatNumber, formatTime, t } from './i18n.js';

const PAGE = 50;
const SVG = 'http://www.w3.org/2000/svg';

export async function showLeaderboard(main) {
  const rows = h('tbody', { 'data-testid': 'leaderboard' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true, 'data-testid': 'leaderboard-more' }, t('leaderboard.more'));
  const empty = h('p', { class: 'muted', hidden: true }, t('leaderboard.empty'));
  replace(main,
    h('h1', {}, t('leaderboard.title')),
    h('section', { class: 'panel' },
      h('p', { class: 'muted' }, t('leaderboard.about')),
      h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': t('leaderboard.title') },
        h('table', { class: 'leaderboard' },
          h('thead', {}, h('tr', {},
            h('th', { scope: 'col' }, t('leaderboard.rank')),
            h('th', { scope: 'col' }, t('leaderboard.player')),
            h('th', { scope: 'col' }, t('leaderboard.rating')),
            h('th', { scope: 'col' }, t('leaderboard.games')))),
          rows)),
      empty, more));
  await loadPage(rows, more, empty, null);
}

async function loadPage(rows, more, empty, cursor) {
  const query = new URLSearchParams({ limit: String(PAGE) });
  if (cursor) query.set('cursor', cursor);
  const { body } = await call('GET', `/v1/leaderboard?${query}`);
  rows.append(...body.accounts.map((entry) => h('tr', { 'data-username': entry.username },
    h('td', {}, formatNumber(entry.rank)),
    h('th', { scope: 'row' }, h('a', { href: `#/player/${entry.username}` }, entry.display_name),
      entry.display_name !== entry.username && h('span', { class: 'muted' }, ` (${entry.username})`)),
    h('td', {}, ratingText(entry.rating)),
    h('td', {}, formatNumber(entry.rating.games)))));
  empty.hidden = rows.childElementCount > 0;
  more.hidden = !body.next_cursor;
  more.onclick = async () => {
    more.disabled = true;
    try {
      await loadPage(rows, more, empty, body.next_cursor);
    } catch (error) {
      sayError(error);
    } finally {
      more.disabled = false;
    }
  };
}

// "1,623 ± 180", and "provisional" while the server is still unsure.
export function ratingText(rating) {
  const text = t('rating.value', { value: Math.round(rating.value), deviation: Math.round(rating.deviation) });
  return rating.provisional ? `${text} ${t('rating.provisional')}` : text;
}

// The profile's ratings panel: the rating now, and the chart of its history with a table of the
// same figures for those who do not see the chart.
export async function ratingPanel(username, rating) {
  const { body } = await call('GET', `/v1/accounts/${encodeURIComponent(username)}/ratings`);
  const history = body.history;
  return h('section', { class: 'panel', 'aria-labelledby': 'rating-title', 'data-testid': 'rating' },
    h('h2', { id: 'rating-title' }, t('rating.title')),
    h('p', { 'data-testid': 'rating-now' }, ratingText(rating), ' · ', t('rating.games', { count: rating.games })),
    history.length === 0
      ? h('p', { class: 'muted' }, t('rating.no_history'))
      : [ratingChart(history), historyTable(history)]);
}

// The chart's frame, in its own units (the SVG scales to the panel's width).
const WIDTH = 600;
const HEIGHT = 200;
const MARGIN = { left: 48, right: 12, top: 12, bottom: 24 };

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) {
    if (child) element.append(child);
  }
  return element;
}

// The rating before the first game, then after each: a line of values in a band of ± deviation,
// with the scale's lowest and highest values written on the left.
export function ratingChart(history) {
  const points = [history[0].before, ...history.map((entry) => entry.after)];
  const low = Math.min(...points.map((rating) => rating.value - rating.deviation));
  const high = Math.max(...points.map((rating) => rating.value + rating.deviation));
  const span = high - low || 1;
  const x = (index) => MARGIN.left + (index * (WIDTH - MARGIN.left - MARGIN.right)) / (points.length - 1);
  const y = (value) => MARGIN.top + ((high - value) * (HEIGHT - MARGIN.top - MARGIN.bottom)) / span;
  const line = points.map((rating, index) => `${x(index).toFixed(1)},${y(rating.value).toFixed(1)}`).join(' ');
  const upper = points.map((rating, index) => `${x(index).toFixed(1)},${y(rating.value + rating.deviation).toFixed(1)}`);
  const lower = points.map((rating, index) => `${x(index).toFixed(1)},${y(rating.value - rating.deviation).toFixed(1)}`).reverse();
  const last = points[points.length - 1];
  const label = t('rating.chart_label', { count: history.length, first: Math.round(points[0].value), last: Math.round(last.value) });
  return svg('svg', { class: 'rating-chart', viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': label, 'data-testid': 'rating-chart' },
    svg('title', {}, label),
    svg('line', { class: 'axis', x1: MARGIN.left, y1: MARGIN.top, x2: MARGIN.left, y2: HEIGHT - MARGIN.bottom }),
    svg('line', { class: 'axis', x1: MARGIN.left, y1: HEIGHT - MARGIN.bottom, x2: WIDTH - MARGIN.right, y2: HEIGHT - MARGIN.bottom }),
    axisLabel(MARGIN.top + 4, high),
    axisLabel(HEIGHT - MARGIN.bottom, low),
    svg('polygon', { class: 'band', points: [...upper, ...lower].join(' ') }),
    svg('polyline', { class: 'line', points: line }),
    ...points.map((rating, index) => svg('circle', { class: 'point', cx: x(index).toFixed(1), cy: y(rating.value).toFixed(1), r: 3 })));
}

function axisLabel(at, value) {
  const text = svg('text', { x: MARGIN.left - 6, y: at, 'text-anchor': 'end' });
  text.textContent = formatNumber(Math.round(value));
  return text;
}

function historyTable(history) {
  return h('details', {},
    h('summary', {}, t('rating.history_table')),
    h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': t('rating.history_table') },
      h('table', { 'data-testid': 'rating-history' },
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, t('rating.when')),
          h('th', { scope: 'col' }, t('rating.before')),
          h('th', { scope: 'col' }, t('rating.after')),
          h('th', { scope: 'col' }, t('rating.game')))),
        h('tbody', {}, history.map((entry) => h('tr', {},
          h('td', {}, formatTime(entry.at, { dateStyle: 'medium', timeStyle: 'short' })),
          h('td', {}, formatNumber(Math.round(entry.before.value))),
          h('td', {}, formatNumber(Math.round(entry.after.value))),
          h('td', {}, h('a', { href: `#/replay/${entry.game_id}` }, t('summary.replay')))))))));
}
