// Cards as the page draws them: a card's name in the page's language (jokers included), its face
// or back, and a grid of any shape (docs/RULES.md "House-rule variants"). Their points are
// scoring.js's.

import { h } from './dom.js';
import { t } from './i18n.js';
import { isJoker, rankOf } from './scoring.js';

const SUITS = { S: '♠', H: '♥', D: '♦', C: '♣' };

const suitOf = (code) => code.slice(-1);

// A card's name in the page's language ("Queen of spades"); a card the viewer cannot see is
// "face down".
export function cardName(code) {
  if (!code) return t('card.face_down');
  if (isJoker(code)) return t(`card.joker.${suitOf(code)}`);
  return t('card.name', { rank: t(`rank.${rankOf(code)}`), suit: t(`suit.${suitOf(code)}`) });
}

// The face of a card (`code`), or its back (null). `faceDown` marks a card known to the viewer
// (a replay) that lies face down on the table. `action` makes it a button.
export function cardElement(code, { faceDown = false, action = null, label = null, selected = false } = {}) {
  const classes = ['card'];
  if (!code) classes.push('back');
  else if (code === 'JR' || (!isJoker(code) && 'HD'.includes(suitOf(code)))) classes.push('red');
  if (faceDown) classes.push('face-down');
  if (action) classes.push('playable');
  if (selected) classes.push('selected');
  const face = code
    ? [h('span', { class: 'rank', 'aria-hidden': 'true' }, t(`rank.index.${rankOf(code)}`)),
      h('span', { class: 'suit', 'aria-hidden': 'true' }, isJoker(code) ? '★' : SUITS[suitOf(code)])]
    : [];
  const name = label || (faceDown ? t('card.known_face_down', { card: cardName(code) }) : cardName(code));
  const attributes = {
    class: classes.join(' '), 'aria-label': name, title: name, 'data-card': code || '',
    'data-down': faceDown ? t('card.down_mark') : null,
  };
  if (action) return h('button', { ...attributes, type: 'button', onclick: action }, face);
  return h('div', { ...attributes, role: 'img' }, face);
}

// A grid of `shape` ({rows, columns}, as a view's grid_shape), row-major; `cell(position)` gives
// each card's element.
export function gridElement(cell, shape, extra = {}) {
  const positions = Array.from({ length: shape.rows * shape.columns }, (_, position) => position);
  return h('div', { class: ['grid', `columns-${shape.columns}`].join(' '), ...extra }, positions.map(cell));
}
