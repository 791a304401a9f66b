// Building the page without HTML strings: every piece of text, trusted or not, becomes a text
// node (textContent), so a player's name or client seed can never turn into markup. Also the
// page's two message regions: the alert (problems, warnings) and the polite announcer.

import { Problem } from './api.js';
import { currentLanguage, has, t } from './i18n.js';

// h('button', {class: 'x', onclick: f, 'aria-label': 'y'}, 'text', child, ...)
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on')) {
      element.addEventListener(name.slice(2), value);
    } else if (name === 'value' || name === 'checked' || name === 'disabled') {
      element[name] = value;
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else if (child instanceof Node) element.appendChild(child);
    else element.appendChild(document.createTextNode(String(child)));
  }
}

// Replaces the content of `element` with `children`.
export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

// A message for the player in the page's alert region; '' clears it.
export function say(text, kind = 'error') {
  const region = document.getElementById('message');
  region.className = text ? `message ${kind}` : 'message';
  region.textContent = text || '';
}

// A failure in the alert region: a problem from the server is explained in the page's language
// (by its `code`), followed by the server's own `detail`, which is in English.
export function sayError(error, context = null) {
  const region = document.getElementById('message');
  region.className = 'message error';
  const explanation = error instanceof Problem
    ? t(has(`problem.${error.code}`) ? `problem.${error.code}` : 'problem.unknown')
    : t('problem.network');
  replace(region,
    h('span', { class: 'explanation' }, context ? `${context} ${explanation}` : explanation),
    ' ',
    h('span', { class: 'detail', 'data-testid': 'problem-detail', lang: currentLanguage() === 'en' ? null : 'en' }, error.message));
}

// Says `text` to screen readers: a line added to the polite live region that stays on the page
// across renders (added, not replaced, so that quick announcements are not lost).
export function announce(text) {
  const region = document.getElementById('announcer');
  region.append(h('p', {}, text));
  while (region.childElementCount > 8) region.firstElementChild.remove();
}
