// The page's language: which catalogs exist (one file a language, web/lang-xx.js), which one the
// page speaks (the switch's choice, remembered in localStorage, else the browser's languages,
// else English), t() for every string the page shows, and numbers and times formatted for the
// language with Intl.

// The languages there are a catalog for, as the server lists them (each web/lang-xx.js it
// embeds) once loadLanguages() has read its list; the first, English, is the fallback. Adding
// one is writing web/lang-xx.js.
export let LANGUAGES = ['en'];

export async function loadLanguages() {
  LANGUAGES = (await import('./languages.js')).default;
}

const CHOICE = 'golf.lang';

let language = LANGUAGES[0];
let catalog = {};
let numbers = new Intl.NumberFormat(language);
let plurals = new Intl.PluralRules(language);

// The language to speak: the remembered choice, else the first of the browser's that we have.
export function preferredLanguage() {
  const chosen = localStorage.getItem(CHOICE);
  if (LANGUAGES.includes(chosen)) return chosen;
  for (const tag of navigator.languages || [navigator.language]) {
    const primary = String(tag).toLowerCase().split('-')[0];
    if (LANGUAGES.includes(primary)) return primary;
  }
  return LANGUAGES[0];
}

// Loads the catalog of `code` and makes it the page's language (the <html lang> included).
export async function useLanguage(code) {
  const module = await import(`./lang-${code}.js`);
  language = code;
  catalog = module.default;
  numbers = new Intl.NumberFormat(code);
  plurals = new Intl.PluralRules(code);
  document.documentElement.lang = code;
}

// Remembers the switch's choice for the next visits.
export function chooseLanguage(code) {
  localStorage.setItem(CHOICE, code);
}

export function currentLanguage() {
  return language;
}

// A language's name in that language ("English", "français"), for the switch.
export function languageName(code) {
  return new Intl.DisplayNames([code], { type: 'language' }).of(code);
}

export function formatNumber(value) {
  return numbers.format(value);
}

// Items as the language lists them ("1, 2 and 3", « 1, 2 et 3 »).
export function formatList(items) {
  return new Intl.ListFormat(language, { type: 'conjunction' }).format(items);
}

// A number of seconds in the largest whole unit (days, hours, minutes, seconds), spelled out.
export function formatDuration(seconds) {
  const units = [['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]];
  const [unit, size] = units.find(([, length]) => seconds % length === 0);
  return new Intl.NumberFormat(language, { style: 'unit', unit, unitDisplay: 'long' }).format(seconds / size);
}

// A moment (an RFC 3339 string or milliseconds) as the language writes a date and time.
export function formatTime(moment, options = { dateStyle: 'medium', timeStyle: 'medium' }) {
  return new Intl.DateTimeFormat(language, options).format(new Date(moment));
}

// The string of `key`, its {placeholders} filled from `params` (numbers formatted for the
// language). A value may be plural forms ({one, other, ...}), chosen by `params.count`.
export function t(key, params = {}) {
  let text = catalog[key];
  if (text === undefined) {
    console.error(`no string ${key} in the catalog of ${language}`);
    return key;
  }
  if (typeof text === 'object') text = text[plurals.select(params.count)] ?? text.other;
  return text.replace(/\{(\w+)\}/g, (whole, name) => {
    const value = params[name];
    if (!(name in params)) return whole;
    return typeof value === 'number' ? formatNumber(value) : String(value);
  });
}

// Whether the catalog has `key` (problem codes the client does not know yet have none).
export function has(key) {
  return Object.hasOwn(catalog, key);
}
