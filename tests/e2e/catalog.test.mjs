// The catalogs of the web client's strings (web/lang-*.js): every language has the keys of
// English, with the same placeholders and plural forms, and is a language the running server
// offers (GOLF_URL's /web/languages.js, which its build lists from the files); and no string the page shows is written outside them: web/*.js and web/index.html
// are scanned for prose, with a short allow-list of what is not prose (CSS classes, HTTP names).
// Node alone: no browser.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const WEB = new URL('../../web/', import.meta.url);
const read = (name) => readFileSync(new URL(name, WEB), 'utf8');
const files = readdirSync(WEB);
const catalogFiles = files.filter((name) => /^lang-[a-z]{2,3}\.js$/.test(name));
const catalogs = Object.fromEntries(await Promise.all(catalogFiles.map(async (name) =>
  [name.slice(5, -3), (await import(new URL(name, WEB))).default])));

const placeholders = (value) => {
  const texts = typeof value === 'string' ? [value] : Object.values(value);
  return [...new Set(texts.flatMap((text) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1])))].sort();
};

test('every language has exactly the keys of English, with the same placeholders', () => {
  const english = catalogs.en;
  assert.ok(Object.keys(english).length > 100, 'the English catalog is read');
  for (const [code, catalog] of Object.entries(catalogs)) {
    const missing = Object.keys(english).filter((key) => !Object.hasOwn(catalog, key));
    const extra = Object.keys(catalog).filter((key) => !Object.hasOwn(english, key));
    assert.deepEqual(missing, [], `keys missing in lang-${code}.js`);
    assert.deepEqual(extra, [], `keys of lang-${code}.js that English does not have`);
    for (const [key, value] of Object.entries(catalog)) {
      assert.deepEqual(placeholders(value), placeholders(english[key]), `the placeholders of ${key} in lang-${code}.js`);
      if (typeof value === 'object') {
        assert.ok(value.one !== undefined && value.other !== undefined, `${key} in lang-${code}.js has the forms one and other`);
      } else {
        assert.equal(typeof value, 'string', `${key} in lang-${code}.js`);
        assert.ok(value.trim() !== '', `${key} in lang-${code}.js is not empty`);
      }
    }
  }
});

test('every catalog file is a language the server offers, English first', async () => {
  const served = await fetch(new URL('/web/languages.js', process.env.GOLF_URL));
  assert.equal(served.status, 200);
  const listed = (await served.text()).match(/^export default \[(.*)\];$/m);
  assert.ok(listed, 'languages.js exports a list');
  const languages = [...listed[1].matchAll(/'([a-z]+)'/g)].map((match) => match[1]);
  assert.deepEqual([...languages].sort(), Object.keys(catalogs).sort(), 'the server offers every web/lang-*.js');
  assert.equal(languages[0], 'en', 'English comes first: it is the fallback');
});

// The string literals of a JS source (the static parts of template literals included), with their
// line, skipping comments and regular expression literals.
function literals(source) {
  const found = [];
  let line = 1;
  let i = 0;
  let last = '';
  const push = (text, at) => found.push({ text, line: at });
  const readString = (quote) => {
    const at = line;
    let text = '';
    for (i += 1; i < source.length && source[i] !== quote; i += 1) {
      if (source[i] === '\\') { text += source[i + 1]; i += 1; } else text += source[i];
      if (source[i] === '\n') line += 1;
    }
    push(text, at);
  };
  const readTemplate = () => {
    let at = line;
    let text = '';
    for (i += 1; i < source.length && source[i] !== '`'; i += 1) {
      if (source[i] === '\\') { text += source[i + 1]; i += 1; continue; }
      if (source[i] === '$' && source[i + 1] === '{') {
        push(text, at);
        text = '';
        let depth = 1;
        for (i += 2; depth > 0; i += 1) {
          if (source[i] === '{') depth += 1;
          else if (source[i] === '}') depth -= 1;
          else if (source[i] === '\'' || source[i] === '"') readString(source[i]);
          else if (source[i] === '`') readTemplate();
        }
        i -= 1;
        at = line;
        continue;
      }
      if (source[i] === '\n') line += 1;
      text += source[i];
    }
    push(text, at);
  };
  for (; i < source.length; i += 1) {
    const c = source[i];
    if (c === '\n') { line += 1; continue; }
    if (/\s/.test(c)) continue;
    if (c === '/' && source[i + 1] === '/') { while (i < source.length && source[i] !== '\n') i += 1; line += 1; continue; }
    if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      line += (source.slice(i, end).match(/\n/g) || []).length;
      i = end + 1;
      continue;
    }
    if (c === '\'' || c === '"') { readString(c); last = 'value'; continue; }
    if (c === '`') { readTemplate(); last = 'value'; continue; }
    if (c === '/' && !/[\w)\]]$/.test(last)) {
      // A regular expression literal: up to the closing slash outside a class.
      let inClass = false;
      for (i += 1; i < source.length; i += 1) {
        if (source[i] === '\\') { i += 1; continue; }
        if (source[i] === '[') inClass = true;
        else if (source[i] === ']') inClass = false;
        else if (source[i] === '/' && !inClass) break;
      }
      last = ')';
      continue;
    }
    last = /[\w$]/.test(c) ? (/\w/.test(last.slice(-1)) && last !== 'value' ? last + c : c) : c;
    if (/^(return|typeof|case|of|in)$/.test(last)) last = '(';
  }
  return found;
}

// Not prose: class names of app.css, HTTP names, the fixed words of protocols the page speaks.
const CSS_CLASSES = new Set([...read('app.css').matchAll(/\.([a-z][\w-]*)/g)].map((match) => match[1]));
// Classes that only name an element (no rule styles them), and tags in selectors.
const MARKUP = new Set(['slider', 'facts', 'join', 'status', 'drawn', 'button']);
const isMarkup = (word) => CSS_CLASSES.has(word.replace(/^\./, '')) || MARKUP.has(word);
const ALLOWED = new Set([
  'Content-Type', 'Authorization', 'Bearer ', 'If-None-Match', 'If-Match', 'Idempotency-Key', 'Last-Event-ID',
  'Accept', 'ETag', 'SHA-256', 'GET', 'POST', 'DELETE',
]);
// Developer messages (the console, thrown errors): never shown as the page's text.
const DEVELOPER = [
  /^no string $/, /^ in the catalog of $/,
  /^not an integer a log entry may hold: $/, /^a $/, /^ has no JSON form$/,
];

function isProse(text) {
  if (!/[A-Za-z]{2}/.test(text)) return false;
  if (ALLOWED.has(text) || DEVELOPER.some((pattern) => pattern.test(text))) return false;
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words.length > 0 && words.every(isMarkup)) return false;
  return /\s/.test(text) || /^[A-Z][a-z]/.test(text);
}

test('no string the page shows is written outside the catalogs', () => {
  assert.ok(isProse('Your turn') && isProse('the hole is over') && isProse(' · total '), 'the scan sees prose');
  assert.deepEqual(literals("h('p', {}, `Hole ${n} of ${m}`, /it's/.test(x) ? 'a b' : \"c\")").map((l) => l.text),
    ['p', 'Hole ', ' of ', '', 'a b', 'c'], 'the scan reads literals and skips regular expressions');
  const prose = [];
  for (const name of files.filter((file) => file.endsWith('.js') && !catalogFiles.includes(file))) {
    for (const { text, line } of literals(read(name))) {
      if (isProse(text)) prose.push(`web/${name}:${line}: ${JSON.stringify(text)}`);
    }
  }
  assert.deepEqual(prose, [], 'move these strings to web/lang-*.js');
});

test('index.html has no text of its own but its bilingual noscript', () => {
  const html = read('index.html').replace(/<noscript lang="(en|fr)">[^<]*<\/noscript>/g, '');
  const text = html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  assert.equal(text, '', 'text of index.html outside a data-i18n element');
  assert.doesNotMatch(html, /\s(title|aria-label|alt|placeholder)="/, 'labels of index.html come from the catalog');
  for (const [, key] of html.matchAll(/data-i18n(?:-label)?="([^"]+)"/g)) {
    assert.ok(Object.hasOwn(catalogs.en, key), `index.html names ${key}, which the catalog has`);
  }
});
