// Cards: their points and a grid's score (docs/RULES.md "Scoring", as src/engine/score.rs computes
// them), and how a card is drawn on the page.

import { h } from './dom.js';
import { t } from './i18n.js';

const SUITS = { S: '♠', H: '♥', D: '♦', C: '♣' };

const rankOf = (code) => code.slice(0, -1);
const suitOf = (code) => code.slice(-1);

// Ace 1, Two −2, 3 to 10 face value, Jack and Queen 10, King 0.
export function cardPoints(code) {
  const rank = rankOf(code);
  if (rank === 'A') return 1;
  if (rank === '2') return -2;
  if (rank === 'J' || rank === 'Q') return 10;
  if (rank === 'K') return 0;
  return Number(rank);
}

// Columns (0,3), (1,4), (2,5): a pair of the same rank scores 0, else the sum.
export function gridScore(grid) {
  let score = 0;
  for (let column = 0; column < 3; column += 1) {
    const [top, bottom] = [grid[column], grid[column + 3]];
    score += rankOf(top) === rankOf(bottom) ? 0 : cardPoints(top) + cardPoints(bottom);
  }
  return score;
}

// A card's name in the page's language ("Queen of spades"); a card the viewer cannot see is
// "face down".
export function cardName(code) {
  if (!code) return t('card.face_down');
  return t('card.name', { rank: t(`rank.${rankOf(code)}`), suit: t(`suit.${suitOf(code)}`) });
}

// The face of a card (`code`), or its back (null). `faceDown` marks a card known to the viewer
// (a replay) that lies face down on the table. `action` makes it a button.
export function cardElement(code, { faceDown = false, action = null, label = null, selected = false } = {}) {
  const classes = ['card'];
  if (!code) classes.push('back');
  else if ('HD'.includes(suitOf(code))) classes.push('red');
  if (faceDown) classes.push('face-down');
  if (action) classes.push('playable');
  if (selected) classes.push('selected');
  const face = code
    ? [h('span', { class: 'rank', 'aria-hidden': 'true' }, t(`rank.index.${rankOf(code)}`)),
      h('span', { class: 'suit', 'aria-hidden': 'true' }, SUITS[suitOf(code)])]
    : [];
  const name = label || (faceDown ? t('card.known_face_down', { card: cardName(code) }) : cardName(code));
  const attributes = {
    class: classes.join(' '), 'aria-label': name, title: name, 'data-card': code || '',
    'data-down': faceDown ? t('card.down_mark') : null,
  };
  if (action) return h('button', { ...attributes, type: 'button', onclick: action }, face);
  return h('div', { ...attributes, role: 'img' }, face);
}

// A 2×3 grid of cards; `cell(position)` gives each card's element.
export function gridElement(cell, extra = {}) {
  return h('div', { class: 'grid', ...extra }, [0, 1, 2, 3, 4, 5].map(cell));
}
