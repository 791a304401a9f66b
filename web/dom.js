// Building the page without HTML strings: every piece of text, trusted or not, becomes a text
// node (textContent), so a player's name or client seed can never turn into markup.

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

// A message for the player in the page's alert region (problems show their `detail`).
export function say(text, kind = 'error') {
  const region = document.getElementById('message');
  region.className = text ? `message ${kind}` : 'message';
  region.textContent = text || '';
}
