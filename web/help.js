// How to play: a few screens (the grid, a turn, scoring with example grids drawn by cards.js,
// the options of a game, where to read more), the panel of a game's options with a line of
// explanation each (shown at the table too), and the offer of these screens on a first visit.

import { call } from './api.js';
import { cardElement, gridElement } from './cards.js';
import { gridScore, shapeOf } from './scoring.js';
import { h, replace } from './dom.js';
import { formatDuration, formatNumber, t } from './i18n.js';

const OFFERED = 'golf.help.offered';
// The full rules, as the service serves docs/RULES.md.
const RULES_PATH = '/web/RULES.md';
const SCREENS = ['grid', 'turn', 'scoring', 'options', 'more'];

// Example grids, top row then bottom row (the second is the one of docs/RULES.md).
const EXAMPLES = [
  ['JH', '3C', '4D', 'QS', '3S', '9H'],
  ['KS', '2H', '7C', 'KD', '5S', '7D'],
  ['2S', 'KH', '2D', 'KC', '2C', 'KD'],
];

// The house-rule options (docs/RULES.md "House-rule variants"), one line each; a game that
// leaves them out (golf-log/1) has their defaults.
function houseRules(rules) {
  const shape = shapeOf(rules.grid);
  const cells = { ...shape, count: shape.rows * shape.columns };
  const reveal = rules.initial_reveal ?? 2;
  const jokerValue = rules.joker_value ?? -2;
  const pairs = rules.negative_pairs ?? 'zero';
  const bonus = rules.four_of_a_kind ?? 0;
  return [
    [t('rules.grid'), t('rules.grid.value', cells), t('rules.grid.explained', cells)],
    [t('rules.initial_reveal'), formatNumber(reveal),
      reveal ? t('rules.initial_reveal.explained', { count: reveal }) : t('rules.initial_reveal.none')],
    rules.jokers
      ? [t('rules.jokers'), formatNumber(rules.jokers), t('rules.jokers.on', { value: jokerValue })]
      : [t('rules.jokers'), t('rules.none'), t('rules.jokers.off')],
    [t('rules.negative_pairs'), t(`rules.pairs.${pairs}`), t(`rules.negative_pairs.${pairs}`)],
    bonus
      ? [t('rules.four_of_a_kind'), formatNumber(bonus), t('rules.four_of_a_kind.on', { bonus })]
      : [t('rules.four_of_a_kind'), t('rules.none'), t('rules.four_of_a_kind.off')],
    [t('rules.knock'), rules.knock ? t('rules.on') : t('rules.off'), t(`rules.knock.${rules.knock ? 'on' : 'off'}`)],
  ];
}

// The options of a game, one line each, as a definition list.
export function rulesList(rules, stacked = false) {
  const flip = rules.flip_after_discard;
  const timeout = rules.turn_timeout_s;
  const items = [
    [t('rules.final_turns'), rules.final_turns ? t('rules.on') : t('rules.off'), t(`rules.final_turns.${rules.final_turns ? 'on' : 'off'}`)],
    [t('rules.flip_after_discard'), t(`rules.flip.${flip}`), t(`rules.flip_after_discard.${flip}`)],
    [t('rules.max_turns_per_hole'), t('rules.turns', { count: rules.max_turns_per_hole }), t('rules.max_turns_per_hole.explained', { count: rules.max_turns_per_hole })],
    timeout
      ? [t('rules.turn_timeout'), formatDuration(timeout), t('rules.turn_timeout.on', { time: formatDuration(timeout) })]
      : [t('rules.turn_timeout'), t('rules.none'), t('rules.turn_timeout.off')],
    ...houseRules(rules),
    stacked && [t('rules.stacked'), t('rules.on'), t('rules.stacked.explained')],
  ];
  return h('dl', { class: 'rules', 'data-testid': 'rules' }, items.filter(Boolean).map(([name, value, line]) => h('div', {},
    h('dt', {}, t('rules.label', { name }), h('strong', {}, value)),
    h('dd', {}, line))));
}

// The table's panel: this game's options, and the way to the how-to-play screens.
export function rulesPanel(view, game) {
  return h('section', { class: 'panel', 'aria-labelledby': 'rules-title' },
    h('h2', { id: 'rules-title' }, t('rules.title')),
    rulesList(view.rules, view.stacked),
    h('p', {}, h('a', { href: `#/help/${game}`, 'data-testid': 'how-to-play' }, t('table.how_to_play'))));
}

// Offers the how-to-play screens once, on the first visit of this browser.
export function offerHelpOnce() {
  if (localStorage.getItem(OFFERED)) return;
  localStorage.setItem(OFFERED, '1');
  const offer = document.getElementById('offer');
  const close = () => { offer.hidden = true; };
  replace(offer,
    h('p', {}, t('help.offer'), ' ',
      h('a', { href: '#/help', onclick: close, 'data-testid': 'offer-help' }, t('help.offer_link')), ' ',
      h('button', { type: 'button', class: 'secondary', onclick: close }, t('help.offer_dismiss'))));
  offer.hidden = false;
}

// The screens; with `game`, the options screen shows that game's.
export async function showHelp(main, game) {
  document.getElementById('offer').hidden = true;
  const view = game ? (await call('GET', `/v1/games/${game}`)).body : null;
  let current = 0;
  const screen = h('section', { class: 'panel help-screen', 'aria-labelledby': 'help-screen-title' });
  const position = h('p', { class: 'muted', 'data-testid': 'help-position' });
  const previous = h('button', { type: 'button', class: 'secondary', onclick: () => show(current - 1, true) }, t('help.previous'));
  const next = h('button', { type: 'button', onclick: () => show(current + 1, true) }, t('help.next'));
  const contents = h('ol', { class: 'help-contents' });
  const show = (index, focus) => {
    current = Math.min(Math.max(index, 0), SCREENS.length - 1);
    replace(screen, ...SCREEN_CONTENT[SCREENS[current]](view, game));
    replace(position, t('help.position', { screen: current + 1, count: SCREENS.length }));
    previous.disabled = current === 0;
    next.disabled = current === SCREENS.length - 1;
    replace(contents, SCREENS.map((name, i) => h('li', {}, h('button', {
      type: 'button', class: 'link', 'aria-current': i === current ? 'step' : null, onclick: () => show(i, true),
    }, t(`help.${name}.title`)))));
    if (focus) screen.querySelector('h2').focus();
  };
  replace(main,
    h('h1', {}, t('help.title')),
    h('nav', { 'aria-label': t('help.contents') }, contents),
    screen,
    h('div', { class: 'help-nav' }, previous, position, next));
  show(0, false);
}

const title = (name) => h('h2', { id: 'help-screen-title', tabindex: '-1' }, t(`help.${name}.title`));
const paragraphs = (...keys) => keys.map((key) => h('p', {}, t(key)));

function exampleGrid(codes, faceUp = [0, 1, 2, 3, 4, 5]) {
  return gridElement((position) => cardElement(faceUp.includes(position) ? codes[position] : null), shapeOf('2x3'));
}

const SCREEN_CONTENT = {
  grid: () => [
    title('grid'),
    ...paragraphs('help.grid.deal', 'help.grid.reveal', 'help.grid.aim'),
    h('figure', { class: 'example' },
      exampleGrid(EXAMPLES[0], [0, 4]),
      h('figcaption', {}, t('help.grid.caption'))),
  ],
  turn: () => [
    title('turn'),
    h('ol', {}, ['draw', 'place', 'discard_rule', 'end'].map((step) => h('li', {}, t(`help.turn.${step}`)))),
    h('figure', { class: 'example piles' },
      h('div', { class: 'pile' }, cardElement(null, { label: t('help.turn.stock') }), h('div', {}, t('help.turn.stock'))),
      h('div', { class: 'pile' }, cardElement('7D'), h('div', {}, t('help.turn.discard'))),
      h('figcaption', {}, t('help.turn.caption'))),
    ...paragraphs('help.turn.hole_end'),
  ],
  scoring: () => [
    title('scoring'),
    ...paragraphs('help.scoring.values', 'help.scoring.columns', 'help.scoring.total'),
    h('div', { class: 'examples' }, EXAMPLES.map((codes, i) => h('figure', { class: 'example', 'data-testid': 'example' },
      exampleGrid(codes),
      h('figcaption', {}, t(`help.scoring.example${i + 1}`), ' ',
        h('strong', { 'data-score': gridScore(codes) }, t('help.scoring.score', { score: gridScore(codes) })))))),
  ],
  options: (view, game) => [
    title('options'),
    view
      ? [h('p', {}, t('help.options.this_game')), rulesList(view.rules, view.stacked),
        h('p', {}, h('a', { href: `#/game/${game}` }, t('help.back_to_table')))]
      : [h('p', {}, t('help.options.defaults')),
        h('ul', {}, ['final_turns', 'flip_after_discard', 'max_turns_per_hole', 'turn_timeout', 'grid', 'initial_reveal',
          'jokers', 'negative_pairs', 'four_of_a_kind', 'knock'].map((name) => h('li', {}, t(`help.options.${name}`))))],
  ],
  more: (view, game) => [
    title('more'),
    ...paragraphs('help.more.bots', 'help.more.fair'),
    h('p', {}, h('a', { href: RULES_PATH, 'data-testid': 'full-rules' }, t('help.more.rules')), ' ', t('help.more.rules_language')),
    game ? h('p', {}, h('a', { class: 'button', href: `#/game/${game}` }, t('help.back_to_table')))
      : h('p', {}, h('a', { class: 'button', href: '#/' }, t('help.to_lobby'))),
  ],
};
