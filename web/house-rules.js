// The create form's house rules (docs/RULES.md "House-rule variants"): the presets ("Standard
// 6-card", "4-card with knocking", "9-card", "Jokers") that fill the options, each option editable
// with a line of explanation, and the `rules` they add to the create body (only the options away
// from their defaults, so that a standard game stays a golf-log/1 game).

import { h, replace } from './dom.js';
import { t } from './i18n.js';
import { shapeOf } from './scoring.js';

const DEFAULTS = {
  grid: '2x3', initial_reveal: 2, jokers: 0, joker_value: -2, negative_pairs: 'zero', four_of_a_kind: 0, knock: false,
};
const PRESETS = {
  standard: {},
  knock4: { grid: '2x2', knock: true },
  nine: { grid: '3x3', initial_reveal: 3 },
  jokers: { jokers: 2 },
};
const GRIDS = ['2x2', '2x3', '2x4', '3x3'];

const field = (label, input, hint) => h('label', { class: 'field' }, h('span', {}, label), input, h('small', {}, hint));
const option = (value, text, selected) => h('option', { value, selected: value === selected ? true : null }, text);

// The fieldset, and `rules()`: the options it adds to the create body's rules.
export function houseRulesFields() {
  const preset = h('select', { name: 'preset' });
  const grid = h('select', { name: 'grid' }, GRIDS.map((value) => {
    const shape = shapeOf(value);
    return option(value, t('rules.grid.value', { ...shape, count: shape.rows * shape.columns }), DEFAULTS.grid);
  }));
  const reveal = h('input', { name: 'initial_reveal', type: 'number', min: 0, required: true });
  const jokers = h('input', { name: 'jokers', type: 'checkbox' });
  const jokerValue = h('input', { name: 'joker_value', type: 'number', min: -5, max: 0, required: true });
  const pairs = h('select', { name: 'negative_pairs' },
    ['zero', 'keep'].map((value) => option(value, t(`rules.pairs.${value}`), DEFAULTS.negative_pairs)));
  const bonus = h('input', { name: 'four_of_a_kind', type: 'number', min: -50, max: 0, required: true });
  const knock = h('input', { name: 'knock', type: 'checkbox' });

  // The limits that follow the grid: reveal fewer cards than it holds; no bonus in three rows.
  const fitGrid = () => {
    const shape = shapeOf(grid.value);
    reveal.max = shape.rows * shape.columns - 1;
    bonus.disabled = shape.rows !== 2;
    if (bonus.disabled) bonus.value = '0';
  };
  const values = () => ({
    grid: grid.value, initial_reveal: Number(reveal.value), jokers: jokers.checked ? 2 : 0,
    joker_value: Number(jokerValue.value), negative_pairs: pairs.value, four_of_a_kind: Number(bonus.value), knock: knock.checked,
  });
  const fill = (name) => {
    const chosen = { ...DEFAULTS, ...PRESETS[name] };
    grid.value = chosen.grid;
    reveal.value = String(chosen.initial_reveal);
    jokers.checked = chosen.jokers === 2;
    jokerValue.value = String(chosen.joker_value);
    pairs.value = chosen.negative_pairs;
    bonus.value = String(chosen.four_of_a_kind);
    knock.checked = chosen.knock;
    fitGrid();
  };
  // The preset that the options match, else "custom".
  const match = () => {
    const now = values();
    const found = Object.keys(PRESETS).find((name) => {
      const chosen = { ...DEFAULTS, ...PRESETS[name] };
      return Object.keys(DEFAULTS).every((key) => chosen[key] === now[key]);
    });
    preset.value = found || 'custom';
  };
  replace(preset, [...Object.keys(PRESETS), 'custom'].map((name) => option(name, t(`lobby.preset.${name}`), 'standard')));
  preset.addEventListener('change', () => {
    if (preset.value !== 'custom') fill(preset.value);
  });
  grid.addEventListener('change', fitGrid);
  fill('standard');

  const fieldset = h('fieldset', { class: 'house-rules' },
    h('legend', {}, t('lobby.house_rules')),
    field(t('lobby.variant'), preset, t('lobby.variant.hint')),
    h('div', { class: 'row' },
      field(t('rules.grid'), grid, t('lobby.grid.hint')),
      field(t('rules.initial_reveal'), reveal, t('lobby.initial_reveal.hint'))),
    h('div', { class: 'row' },
      h('label', { class: 'checkbox' }, jokers, ' ', t('rules.jokers'), h('small', {}, t('lobby.jokers.hint'))),
      field(t('lobby.joker_value'), jokerValue, t('lobby.joker_value.hint'))),
    h('div', { class: 'row' },
      field(t('rules.negative_pairs'), pairs, t('lobby.negative_pairs.hint')),
      field(t('rules.four_of_a_kind'), bonus, t('lobby.four_of_a_kind.hint'))),
    h('label', { class: 'checkbox' }, knock, ' ', t('lobby.knock'), h('small', {}, t('lobby.knock.hint'))));
  fieldset.addEventListener('change', (event) => {
    if (event.target !== preset) match();
  });

  const rules = () => Object.fromEntries(Object.entries(values()).filter(([key, value]) => value !== DEFAULTS[key]));
  return { fieldset, rules };
}
