// Scoring, as src/engine/score.rs computes it (docs/RULES.md "Scoring" and "House-rule
// variants"): a card's points, a column's and a grid's score under a game's options (grid shape,
// joker value, pair rule, four-of-a-kind bonus). No DOM: the audit runs it under Node too.

const JOKERS = ['JR', 'JB'];

export const isJoker = (code) => JOKERS.includes(code);

// The rank of a card code ("10" of "10H"); both jokers share the rank "joker", so they pair.
export const rankOf = (code) => (isJoker(code) ? 'joker' : code.slice(0, -1));

// {rows, columns} of a `grid` option ("2x3" by default).
export function shapeOf(grid = '2x3') {
  const [rows, columns] = grid.split('x').map(Number);
  return { rows, columns };
}

// The options that score a grid, from a game's `rules` (a view's, or a log's game_created):
// options a golf-log/1 game leaves out take their defaults.
export function scoringOf(rules = {}) {
  return {
    shape: shapeOf(rules.grid),
    jokerValue: rules.joker_value ?? -2,
    keepNegativePairs: rules.negative_pairs === 'keep',
    fourOfAKind: rules.four_of_a_kind ?? 0,
  };
}

export const DEFAULT_SCORING = scoringOf();

// Ace 1, Two −2, 3 to 10 face value, Jack and Queen 10, King 0, a joker `jokerValue`.
export function cardPoints(code, scoring = DEFAULT_SCORING) {
  const rank = rankOf(code);
  if (rank === 'joker') return scoring.jokerValue;
  if (rank === 'A') return 1;
  if (rank === '2') return -2;
  if (rank === 'J' || rank === 'Q') return 10;
  if (rank === 'K') return 0;
  return Number(rank);
}

// The rank every card of a column shares, or null.
function pairedRank(cards) {
  const rank = rankOf(cards[0]);
  return cards.every((code) => rankOf(code) === rank) ? rank : null;
}

// A column (its cards top to bottom): 0 when all have one rank, unless Twos or jokers under
// "keep"; otherwise the sum of its points.
export function columnScore(cards, scoring = DEFAULT_SCORING) {
  const rank = pairedRank(cards);
  const kept = scoring.keepNegativePairs && (rank === '2' || rank === 'joker');
  if (rank !== null && !kept) return 0;
  return cards.reduce((sum, code) => sum + cardPoints(code, scoring), 0);
}

// The positions of column `column` of a row-major grid, top to bottom.
export function columnPositions(shape, column) {
  return Array.from({ length: shape.rows }, (_, row) => row * shape.columns + column);
}

// A grid (row-major): the sum of its columns, plus the four-of-a-kind bonus once for each rank
// that pairs in two columns of a two-row grid.
export function gridScore(grid, scoring = DEFAULT_SCORING) {
  const paired = [];
  let score = 0;
  for (let column = 0; column < scoring.shape.columns; column += 1) {
    const cards = columnPositions(scoring.shape, column).map((position) => grid[position]);
    score += columnScore(cards, scoring);
    const rank = pairedRank(cards);
    if (rank === null) continue;
    if (scoring.shape.rows === 2 && paired.filter((r) => r === rank).length === 1) score += scoring.fourOfAKind;
    paired.push(rank);
  }
  return score;
}
