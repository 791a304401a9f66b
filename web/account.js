// The account page (#/account): signed out, sign up (a username, an optional display name) or
// sign in with a token copied from another device; signed in, the account (its games, its public
// profile), its token to copy to another device or to replace, the turn notifications, and sign
// out.

import { accountOf, call, forgetAccount, keepAccount } from './api.js';
import { h, replace, say, sayError } from './dom.js';
import { t } from './i18n.js';
import { accountRefused, notificationSetting, watchTurns } from './turns.js';

const field = (label, input, hint) => h('label', { class: 'field' }, h('span', {}, label), input, hint && h('small', {}, hint));

export async function showAccount(main) {
  const account = accountOf();
  if (!account) {
    showSignedOut(main);
    return;
  }
  let body;
  try {
    ({ body } = await call('GET', '/v1/account', { token: account.token }));
  } catch (error) {
    if (error.status !== 401) throw error;
    accountRefused();
    showSignedOut(main);
    return;
  }
  keepAccount({ ...account, display_name: body.display_name });
  showSignedIn(main, accountOf(), body);
}

function signOut() {
  forgetAccount();
  watchTurns();
}

// Signs this browser in to the account whose token is `token`; answers the account.
async function signIn(token) {
  const { body } = await call('GET', '/v1/account', { token });
  keepAccount({ username: body.username, display_name: body.display_name, token });
  watchTurns();
  return body;
}

function showSignedOut(main) {
  replace(main,
    h('h1', {}, t('account.title')),
    h('p', {}, t('account.why')),
    h('section', { class: 'panel', 'aria-labelledby': 'sign-up-title' },
      h('h2', { id: 'sign-up-title' }, t('account.sign_up')),
      signUpForm(main)),
    h('section', { class: 'panel', 'aria-labelledby': 'sign-in-title' },
      h('h2', { id: 'sign-in-title' }, t('account.sign_in')),
      signInForm(main)));
}

function signUpForm(main) {
  const username = h('input', {
    name: 'username', required: true, minlength: 3, maxlength: 24, autocomplete: 'username', spellcheck: 'false',
  });
  const displayName = h('input', { name: 'display_name', maxlength: 40, autocomplete: 'nickname' });
  const submit = h('button', { type: 'submit' }, t('account.create'));
  const form = h('form', {},
    field(t('account.username'), username, t('account.username_hint')),
    field(t('account.display_name'), displayName, t('account.display_name_hint')),
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    say('');
    try {
      const body = { username: username.value.trim() };
      if (displayName.value.trim()) body.display_name = displayName.value;
      const created = await call('POST', '/v1/accounts', { body, headers: { 'Idempotency-Key': crypto.randomUUID() } });
      await signIn(created.body.token);
      await showAccount(main);
      say(t('account.created'), 'info');
    } catch (error) {
      sayError(error);
      submit.disabled = false;
    }
  });
  return form;
}

function signInForm(main) {
  const token = h('input', { name: 'token', required: true, autocomplete: 'off', spellcheck: 'false', class: 'mono' });
  const submit = h('button', { type: 'submit' }, t('account.sign_in_button'));
  const form = h('form', {},
    field(t('account.token'), token, t('account.token_paste_hint')),
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    say('');
    try {
      await signIn(token.value.trim());
      await showAccount(main);
    } catch (error) {
      if (error.status === 401) say(t('account.token_unknown'));
      else sayError(error);
      submit.disabled = false;
    }
  });
  return form;
}

function showSignedIn(main, account, body) {
  replace(main,
    h('h1', {}, t('account.title')),
    h('section', { class: 'panel', 'aria-labelledby': 'who-title', 'data-testid': 'account' },
      h('h2', { id: 'who-title' }, body.display_name),
      h('p', {}, t('account.signed_in_as', { username: body.username })),
      h('p', {}, t('account.played', { count: body.games.played }), ' · ', t('account.won', { count: body.games.won })),
      h('p', {}, h('a', { href: `#/player/${body.username}` }, t('account.profile_link')), ' · ',
        h('a', { href: '#/' }, t('account.my_games_link')))),
    tokenPanel(main, account),
    h('section', { class: 'panel', 'aria-labelledby': 'notify-title' },
      h('h2', { id: 'notify-title' }, t('turns.setting_title')),
      notificationSetting()),
    h('p', {}, h('button', {
      type: 'button',
      class: 'secondary',
      onclick: () => {
        signOut();
        showSignedOut(main);
        say(t('account.signed_out'), 'info');
      },
    }, t('account.sign_out'))));
}

// The token, hidden until asked for, with what to do with it on another device; replacing it
// signs out every other device.
function tokenPanel(main, account) {
  const input = h('input', {
    type: 'password', readonly: true, value: account.token, class: 'mono', 'aria-label': t('account.token'), 'data-testid': 'account-token',
  });
  const show = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false' }, t('account.show_token'));
  show.addEventListener('click', () => {
    const hidden = input.type === 'password';
    input.type = hidden ? 'text' : 'password';
    show.setAttribute('aria-pressed', String(hidden));
  });
  const copy = h('button', { type: 'button', class: 'secondary' }, t('account.copy_token'));
  copy.addEventListener('click', () => {
    input.type = 'text';
    show.setAttribute('aria-pressed', 'true');
    input.select();
    if (navigator.clipboard) navigator.clipboard.writeText(account.token).then(() => say(t('account.copied'), 'info'), () => {});
  });
  const rotate = h('button', { type: 'button', class: 'secondary' }, t('account.rotate'));
  rotate.addEventListener('click', async () => {
    rotate.disabled = true;
    try {
      const { body } = await call('POST', '/v1/account/token', { token: account.token });
      keepAccount({ ...account, token: body.token });
      watchTurns();
      await showAccount(main);
      say(t('account.rotated'), 'info');
    } catch (error) {
      sayError(error);
      rotate.disabled = false;
    }
  });
  return h('section', { class: 'panel', 'aria-labelledby': 'token-title' },
    h('h2', { id: 'token-title' }, t('account.token')),
    h('p', {}, t('account.token_hint')),
    h('div', { class: 'inline' }, input, show, copy),
    h('p', { class: 'muted' }, t('account.rotate_hint')),
    rotate);
}
