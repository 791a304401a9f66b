// What the others did, in a sentence for screen readers: each entry of the game's stream that
// another seat (or the game) wrote is said in the polite live region, in the page's language: a
// knock, and a hole ended by one, included.

import { cardName } from './cards.js';
import { announce } from './dom.js';
import { formatList, t } from './i18n.js';

// The sentence for `entry`, or null for entries a player need not hear (deals, reshuffles).
export function describeEntry(entry, view) {
  const data = entry.data;
  const player = view.players.find((p) => p.seat === data.seat);
  const name = data.name || (player ? player.name : t('table.seat', { seat: (data.seat ?? 0) + 1 }));
  switch (entry.type) {
    case 'player_joined':
      return t('announce.joined', { name });
    case 'cards_revealed':
      return t('announce.revealed', { name, cards: formatList(data.cards.map(cardName)) });
    case 'card_drawn':
      return data.source === 'stock'
        ? t('announce.drew_stock', { name })
        : t('announce.drew_discard', { name, card: cardName(data.card) });
    case 'card_swapped':
      return t('announce.swapped', { name, position: data.position + 1, card: cardName(data.card), replaced: cardName(data.replaced) });
    case 'card_discarded':
      return t('announce.discarded', { name, card: cardName(data.card) });
    case 'card_flipped':
      return t('announce.flipped', { name, position: data.position + 1, card: cardName(data.card) });
    case 'flip_declined':
      return t('announce.declined', { name });
    case 'bot_took_seat':
      return t(`announce.bot_took_seat.${data.reason}`, { name });
    case 'knocked':
      return t('announce.knocked', { name });
    case 'hole_ended':
      return t(data.reason === 'knock' ? 'announce.hole_ended.knock' : 'announce.hole_ended', { hole: data.hole });
    case 'game_ended':
      return t('announce.game_ended');
    default:
      return null;
  }
}

export function announceEntry(entry, view) {
  const sentence = describeEntry(entry, view);
  if (sentence) announce(sentence);
}
