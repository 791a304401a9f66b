// The analysis of a finished game as the replay viewer shows it (GET /v1/games/{id}/analysis):
// fetched, and asked again while the server computes it; each seat's summary; the mistakes and
// blunders marked along the slider and listed; the decision made at an entry, its loss and label,
// and the best move named in words and marked on the cards (docs/API.md, "analysis").

import { call, Problem } from './api.js';
import { cardName } from './cards.js';
import { h } from './dom.js';
import { formatList, formatNumber, t } from './i18n.js';

// How long to wait before asking again while the server answers 202: an analysis takes seconds.
const POLL_MS = 2000;
const MARKED = ['mistake', 'blunder'];

// Asks for the analysis of `game` until it is done or cannot be had, and tells `onChange` each
// state: {state: 'pending'}, {state: 'done', analysis}, {state: 'disabled'} (this server runs no
// analyses) or {state: 'unavailable'}. Stops asking once `wanted()` is false (the page moved on).
export async function followAnalysis(game, wanted, onChange) {
  for (;;) {
    let answer;
    try {
      answer = await call('GET', `/v1/games/${encodeURIComponent(game)}/analysis`);
    } catch (error) {
      if (wanted()) onChange({ state: error instanceof Problem && error.code === 'analysis_disabled' ? 'disabled' : 'unavailable' });
      return;
    }
    if (!wanted()) return;
    if (answer.status === 200) {
      onChange({ state: 'done', analysis: answer.body });
      return;
    }
    onChange({ state: 'pending' });
    await new Promise((resolve) => { setTimeout(resolve, POLL_MS); });
    if (!wanted()) return;
  }
}

// The decisions worth marking on the slider, in log order.
function markedDecisions(analysis) {
  return analysis ? analysis.decisions.filter((decision) => MARKED.includes(decision.label)) : [];
}

// The panel of the analysis: where it stands, or each seat's summary and the marked decisions,
// each a button that moves the slider to it (`go(seq)`). `names[seat]` names the players.
export function analysisPanel(status, names, go) {
  const heading = h('h2', {}, t('analysis.title'));
  if (status.state !== 'done') {
    return h('section', { class: 'panel', 'data-testid': 'analysis' }, heading,
      h('p', { 'data-testid': 'analysis-status', 'data-state': status.state }, t(`analysis.${status.state}`)));
  }
  const { analysis } = status;
  const marked = markedDecisions(analysis);
  const number = (value) => h('td', {}, formatNumber(value));
  return h('section', { class: 'panel', 'data-testid': 'analysis' }, heading,
    h('p', { 'data-testid': 'analysis-status', 'data-state': 'done' }, t('analysis.engine', { engine: analysis.engine })),
    h('p', { class: 'muted' }, t('analysis.thresholds')),
    h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': t('analysis.summary') }, h('table', { class: 'scores', 'data-testid': 'analysis-seats' },
      h('caption', { class: 'visually-hidden' }, t('analysis.summary')),
      h('thead', {}, h('tr', {}, ['table.player', 'analysis.decisions', 'analysis.mean_loss', 'analysis.mistakes', 'analysis.blunders']
        .map((key) => h('th', { scope: 'col' }, t(key))))),
      h('tbody', {}, analysis.seats.map((seat) => h('tr', { 'data-seat': seat.seat },
        h('th', { scope: 'row' }, names[seat.seat] ?? formatNumber(seat.seat + 1)),
        number(seat.decisions), number(seat.mean_loss), number(seat.mistakes), number(seat.blunders)))))),
    h('h3', {}, t('analysis.moments')),
    marked.length === 0
      ? h('p', {}, t('analysis.no_moments'))
      : h('ul', { class: 'moments', 'data-testid': 'analysis-moments' }, marked.map((decision) => h('li', {},
        h('button', { type: 'button', class: 'link', 'data-seq': decision.seq, onclick: () => go(decision.seq) }, momentText(decision, names))))));
}

function momentText(decision, names) {
  return t('analysis.moment', { seq: decision.seq, name: names[decision.seat], label: t(`analysis.label.${decision.label}`), loss: decision.loss });
}

// The ticks under the slider, one at each marked decision's entry (`stepOf(seq)` of `count`),
// coloured by label; the strip is an image whose text alternative lists them.
export function sliderMarks(analysis, count, stepOf) {
  const marked = markedDecisions(analysis);
  if (marked.length === 0) return null;
  const where = (decision) => (count > 1 ? ((stepOf(decision.seq) - 1) / (count - 1)) * 100 : 0);
  const text = formatList(marked.map((decision) => t('analysis.mark', { label: t(`analysis.label.${decision.label}`), seq: decision.seq })));
  return h('div', { class: 'marks', role: 'img', 'aria-label': t('analysis.marks', { list: text }), 'data-testid': 'slider-marks' },
    marked.map((decision) => {
      const tick = h('span', { class: `tick ${decision.label}`, 'data-seq': decision.seq, 'data-label': decision.label });
      // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
      tick.style.left = `${where(decision)}%`;
      return tick;
    }));
}

// The decision recorded at an entry, in words: who played what, what it cost and its label, and
// the best move with both expected scores. `before` is the replay's table just before the entry.
export function decisionLine(decision, names, before) {
  // A swatch says how the cards mark a move, when they do (board marks in replay.js).
  const swatch = (kind, shown) => shown && h('span', { class: `swatch ${kind}`, 'aria-hidden': 'true' });
  const bestPlaces = placesOf(decision.best);
  const same = sameMove(decision.played, decision.best);
  const label = decision.label && h('strong', { class: `label ${decision.label}`, 'data-testid': 'decision-label' }, t(`analysis.label.${decision.label}`));
  const lost = t('analysis.loss', { count: decision.loss, loss: decision.loss });
  const best = same
    ? t('analysis.best_played', { best: decision.expected_best })
    : t('analysis.best', { move: moveText(decision.best, before), best: decision.expected_best, played: decision.expected_played });
  return h('div', { class: 'decision', 'data-testid': 'decision', 'data-seq': decision.seq, 'data-label': decision.label || '' },
    h('p', {}, swatch('played', !same && placesOf(decision.played).positions.length > 0), t('analysis.played', { name: names[decision.seat], move: moveText(decision.played, before) }), ' ', lost,
      label ? ' · ' : '', label),
    h('p', { 'data-testid': 'best-move' }, swatch('best', bestPlaces.positions.length > 0 || bestPlaces.pile !== null), best));
}

function sameMove(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// A move as the table's buttons name it (positions counted from 1).
function moveText(move, before) {
  switch (move.type) {
    case 'reveal': return t('move.reveal', { positions: formatList(move.positions.map((p) => formatNumber(p + 1))), count: move.positions.length });
    case 'swap': return t('move.swap', { position: move.position + 1 });
    case 'flip': return t('move.flip', { position: move.position + 1 });
    case 'discard': return t('move.discard');
    case 'pass': return t('move.pass');
    case 'knock': return t('analysis.knock');
    case 'draw':
      if (move.source === 'stock') return t('move.draw_stock');
      return before?.discardTop ? t('move.draw_discard', { card: cardName(before.discardTop) }) : t('analysis.draw_discard');
    default: return move.type;
  }
}

// Where the cards show a move: the positions of the mover's grid it names, or the pile it draws
// from or discards to.
export function placesOf(move) {
  const positions = move.type === 'reveal' ? move.positions : ['swap', 'flip'].includes(move.type) ? [move.position] : [];
  const pile = move.type === 'draw' ? move.source : move.type === 'discard' ? 'discard' : null;
  return { positions, pile };
}

// Marks a card element as where the best move (`kind` 'best') or the move played ('played') went,
// in its picture and in its name.
export function markCard(element, kind) {
  element.classList.add(kind);
  const name = `${element.getAttribute('aria-label')} (${t(`analysis.${kind}_mark`)})`;
  element.setAttribute('aria-label', name);
  element.setAttribute('title', name);
  return element;
}
