// Quick game (a seek, /v1/seeks): the lobby's panel for a signed-in account. It asks for a game of
// some seats, holes and rated, with bots in the free seats after a wait if the player wants them;
// while the seek waits it shows for how long, when the bots come, and a way to cancel; once
// matched (the answer itself, the account stream's `seek_matched`, or a read of the seek as a
// fallback) it takes the player to the table. The waiting seek is remembered for this tab, so
// coming back to the lobby shows it again.

import { call } from './api.js';
import { h, replace, say, sayError } from './dom.js';
import { formatDuration, t } from './i18n.js';
import { onAccountEvent } from './turns.js';

const WAITING = 'golf.seek';
// The waits before bots the panel offers, in seconds; 0: no bots.
const BOT_WAITS = [5, 15, 30, 60, 120, 0];
// How often a waiting seek is read again, should the stream miss its match.
const POLL_MS = 3000;

const field = (label, input) => h('label', { class: 'field' }, h('span', {}, label), input);

export function quickGamePanel(account, signal) {
  const body = h('div', { 'data-testid': 'quick-game' });
  const panel = h('section', { class: 'panel', 'aria-labelledby': 'quick-title' },
    h('h2', { id: 'quick-title' }, t('seek.title')),
    h('p', {}, t('seek.intro')),
    body);
  const kept = sessionStorage.getItem(WAITING);
  if (kept) {
    call('GET', `/v1/seeks/${encodeURIComponent(kept)}`, { token: account.token })
      .then(({ body: seek }) => show(seek), () => forget())
      .catch((error) => sayError(error));
  } else {
    replace(body, seekForm(account, (seek) => show(seek)));
  }
  function show(seek) {
    if (seek.status === 'matched') {
      forget();
      location.hash = `#/game/${seek.game_id}`;
    } else if (seek.status === 'waiting') {
      sessionStorage.setItem(WAITING, seek.id);
      replace(body, waiting(account, seek, signal, show));
    } else {
      forget();
      if (seek.status === 'expired') say(t('seek.expired'), 'info');
      replace(body, seekForm(account, show));
    }
  }
  return panel;
}

function forget() {
  sessionStorage.removeItem(WAITING);
}

function seekForm(account, show) {
  const seats = h('select', { name: 'seek-seats' }, [2, 3, 4].map((count) => h('option', { value: String(count) }, String(count))));
  const holes = h('input', { name: 'seek-holes', type: 'number', min: 1, max: 18, value: '9', required: true });
  const rated = h('input', { name: 'seek-rated', type: 'checkbox' });
  const bots = h('select', { name: 'seek-bots' }, BOT_WAITS.map((wait) => h('option', { value: String(wait), selected: wait === 30 ? true : null },
    wait ? t('seek.bots_after', { wait: formatDuration(wait) }) : t('seek.no_bots'))));
  const submit = h('button', { type: 'submit' }, t('seek.start'));
  const form = h('form', { class: 'create' },
    h('div', { class: 'row' }, field(t('lobby.seats'), seats), field(t('lobby.holes'), holes)),
    field(t('seek.bots'), bots),
    h('label', { class: 'checkbox' }, rated, ' ', t('seek.rated')),
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    say('');
    try {
      const wait = Number(bots.value);
      const { body } = await call('POST', '/v1/seeks', {
        body: { seats: Number(seats.value), holes: Number(holes.value), rated: rated.checked, bots_after_s: wait || null },
        token: account.token,
      });
      show(body);
    } catch (error) {
      sayError(error);
      submit.disabled = false;
    }
  });
  return form;
}

// The waiting seek: the time waited so far, when bots come, and Cancel. Ends with `show` of the
// seek as it is once it stops waiting.
function waiting(account, seek, signal, show) {
  const since = Date.parse(seek.created_at);
  const elapsed = h('p', { 'data-testid': 'seek-waiting' });
  const bots = seek.bots_after_s ? h('p', { class: 'muted' }) : null;
  const cancel = h('button', { type: 'button', class: 'secondary' }, t('seek.cancel'));
  let done = false;
  const stop = new AbortController();
  signal.addEventListener('abort', () => stop.abort());
  const finish = (next) => {
    if (done) return;
    done = true;
    stop.abort();
    show(next);
  };
  const tick = () => {
    const waited = Math.max(0, Math.round((Date.now() - since) / 1000));
    elapsed.textContent = t('seek.waiting', { time: formatDuration(Math.max(1, waited)) });
    if (bots) {
      const left = seek.bots_after_s - waited;
      bots.textContent = left > 0 ? t('seek.bots_in', { time: formatDuration(left) }) : t('seek.bots_now');
    }
  };
  const read = async () => {
    try {
      const { body } = await call('GET', `/v1/seeks/${encodeURIComponent(seek.id)}`, { token: account.token });
      if (body.status !== 'waiting') finish(body);
    } catch (error) {
      sayError(error);
    }
  };
  tick();
  const ticking = setInterval(tick, 1000);
  const polling = setInterval(read, POLL_MS);
  stop.signal.addEventListener('abort', () => {
    clearInterval(ticking);
    clearInterval(polling);
  });
  onAccountEvent((event) => {
    if (event.type === 'seek_matched' && event.seek_id === seek.id) finish({ ...seek, status: 'matched', game_id: event.game_id, seat: event.seat });
  }, stop.signal);
  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    try {
      await call('DELETE', `/v1/seeks/${encodeURIComponent(seek.id)}`, { token: account.token });
      say(t('seek.cancelled'), 'info');
      finish({ ...seek, status: 'cancelled' });
    } catch (error) {
      // Matched (or expired) meanwhile: the seek says which.
      if (error.status === 409) await read();
      else sayError(error);
      cancel.disabled = false;
    }
  });
  return h('div', { 'aria-live': 'polite' }, elapsed, bots, cancel);
}
