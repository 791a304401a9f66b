// web/scoring.js against the examples of docs/RULES.md ("House-rule variants"), which
// src/engine/score.rs is tested on too: every grid shape, jokers, "keep" and four of a kind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gridScore, scoringOf } from '../../web/scoring.js';

const score = (rules, grid) => gridScore(grid, scoringOf(rules));

test('the original six-card scoring', () => {
  assert.equal(score({}, ['KS', '2S', '9S', 'KH', '3D', '9D']), 1);
  assert.equal(score({}, ['2S', 'QS', 'KS', '2H', 'QH', '4H']), 4);
});

test('grids of 4, 8 and 9 cards', () => {
  assert.equal(score({ grid: '2x2' }, ['5S', 'QH', '7D', 'QC']), 12);
  assert.equal(score({ grid: '2x4' }, ['AS', '9S', '10S', '2S', '3H', '9H', 'KH', '4H']), 16);
  assert.equal(score({ grid: '3x3' }, ['JS', '5S', 'AS', 'JH', '5H', '2H', 'JD', '6D', 'KD']), 15);
});

test('jokers, their value and the pair rule', () => {
  assert.equal(score({ joker_value: -3 }, ['JR', 'KS', 'KH', '4D', 'KD', 'KC']), 1);
  assert.equal(score({ joker_value: -3 }, ['JR', '5S', '6S', 'JB', '7S', '8S']), 26);
  assert.equal(score({ joker_value: -3, negative_pairs: 'keep' }, ['JR', '5S', '6S', 'JB', '7S', '8S']), 20);
  assert.equal(score({ negative_pairs: 'keep' }, ['2S', 'QS', 'KS', '2H', 'QH', '4H']), 0);
});

test('four of a kind, once per rank, in two-row grids', () => {
  assert.equal(score({ four_of_a_kind: -20 }, ['7S', '7D', '3S', '7H', '7C', '4H']), -13);
  assert.equal(score({ grid: '2x4', four_of_a_kind: -10 }, ['QS', '5S', 'QD', '9S', 'QH', '5H', 'QC', '9H']), -10);
  assert.equal(score({ four_of_a_kind: -5, negative_pairs: 'keep' }, ['2S', '2D', 'KS', '2H', '2C', 'KH']), -13);
});
