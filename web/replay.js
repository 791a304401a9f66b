// The replay viewer of a finished game: a step slider over its complete log (from the server's
// export, or an NDJSON file opened from disk), every card shown with face-down ones marked, the
// server's view at each step (GET /replay/{seq}), the server's audit result, the revealed seed,
// the client seeds, and the page's own check of the log (audit.js).

import { call } from './api.js';
import { auditLog } from './audit.js';
import { cardElement, gridElement } from './cards.js';
import { h, replace, say } from './dom.js';

export async function showReplay(main, game) {
  const status = h('p', { class: 'muted' }, 'Loading the log…');
  replace(main, h('section', { class: 'panel' }, h('h2', {}, `Replay of game ${game.slice(0, 8)}`), status));
  let text;
  try {
    ({ body: text } = await call('GET', `/v1/games/${encodeURIComponent(game)}/export`));
  } catch (error) {
    replace(status, error.message);
    return;
  }
  const serverAudit = await call('GET', `/v1/games/${encodeURIComponent(game)}/audit`).then((answer) => answer.body, (error) => {
    say(error.message);
    return null;
  });
  const report = await auditLog(text);
  new Viewer(main, report, { game, serverAudit }).render();
}

// Checks an NDJSON export that the player opens from disk: nothing comes from the server.
export function showFileCheck(main) {
  const input = h('input', { type: 'file', accept: '.ndjson,.jsonl,.json,application/x-ndjson', 'data-testid': 'log-file' });
  const output = h('div', {});
  input.addEventListener('change', async () => {
    const file = input.files[0];
    if (!file) return;
    replace(output, h('p', { class: 'muted' }, `Checking ${file.name}…`));
    const report = await auditLog(await file.text());
    new Viewer(output, report, { fileName: file.name }).render();
  });
  replace(main,
    h('section', { class: 'panel' },
      h('h2', {}, 'Check an exported log'),
      h('p', {}, 'Open a finished game\'s export (GET /v1/games/{id}/export, one JSON entry a line). ',
        'This page checks it by itself, with nothing from the server.'),
      h('label', { class: 'field' }, h('span', {}, 'Log file (NDJSON)'), input)),
    output);
}

class Viewer {
  constructor(main, report, { game = null, serverAudit = null, fileName = null }) {
    this.main = main;
    this.report = report;
    this.game = game;
    this.serverAudit = serverAudit;
    this.fileName = fileName;
    this.step = report.steps.length;
    this.board = h('div', { class: 'replay-board', 'aria-live': 'polite' });
    this.request = 0;
  }

  render() {
    const count = this.report.steps.length;
    const slider = h('input', {
      type: 'range', min: 1, max: Math.max(count, 1), value: String(this.step), 'aria-label': 'Step through the log', 'data-testid': 'step',
    });
    const label = h('output', { 'data-testid': 'step-label' });
    const go = (step) => {
      this.step = Math.min(Math.max(step, 1), count);
      slider.value = String(this.step);
      this.showStep(label);
    };
    slider.addEventListener('input', () => go(Number(slider.value)));
    replace(this.main,
      this.checkPanel(),
      count > 0 && h('section', { class: 'panel' },
        h('h2', {}, 'Step through the log'),
        h('div', { class: 'inline slider' },
          h('button', { type: 'button', class: 'secondary', onclick: () => go(this.step - 1), 'aria-label': 'Previous entry' }, '◀'),
          slider,
          h('button', { type: 'button', class: 'secondary', onclick: () => go(this.step + 1), 'aria-label': 'Next entry' }, '▶')),
        label,
        this.board),
      this.factsPanel());
    if (count > 0) this.showStep(label);
  }

  checkPanel() {
    const report = this.report;
    const verdict = report.verified
      ? 'The in-browser check passed: this log is a complete game, fairly dealt and scored by the rules.'
      : `The in-browser check FAILED at entry ${report.firstBadSeq}.`;
    const server = this.serverAudit;
    return h('section', { class: `panel check ${report.verified ? 'ok' : 'bad'}`, 'data-testid': 'check' },
      h('h2', {}, this.fileName ? `Check of ${this.fileName}` : 'Checked in your browser'),
      h('p', { class: 'verdict', 'data-testid': 'verdict', 'data-verified': String(report.verified), 'data-first-bad-seq': report.firstBadSeq === null ? '' : String(report.firstBadSeq) }, verdict),
      report.stacked && h('p', {}, `This game was created with explicit decks ("stacked"): ${report.stackedHoles.length ? `holes ${report.stackedHoles.join(', ')} were dealt from them and prove nothing about fairness` : 'yet every deal is the fair shuffle'}.`),
      h('ul', { class: 'checks' }, report.checks.map(({ check, outcome }) => h('li', { class: outcome, 'data-check': check }, h('span', { class: 'outcome' }, outcome.toUpperCase()), ` ${check}`))),
      report.findings.length > 0 && h('ul', { class: 'findings', 'data-testid': 'findings' }, report.findings.map((finding) => h('li', {}, `seq ${finding.seq} (${finding.check}): ${finding.message}`))),
      server && h('p', { 'data-testid': 'server-audit' },
        `The server's own audit, computed when the game ended: ${server.verified ? 'verified' : server.verified === false ? `failed at entry ${server.first_bad_seq}` : 'not done yet'}.`));
  }

  factsPanel() {
    const facts = this.report.facts;
    const row = (name, value) => h('tr', {}, h('th', { scope: 'row' }, name), h('td', { class: 'mono' }, value === undefined || value === null ? '—' : String(value)));
    return h('section', { class: 'panel facts' },
      h('h2', {}, 'Seeds and commitment'),
      h('div', { class: 'scroll' }, h('table', {}, h('tbody', {},
        row('Game', facts.gameId),
        row('Commitment (published at creation)', facts.commitment),
        row('Server seed (revealed at the end)', facts.seed),
        row('Effective seed S', facts.effectiveSeed),
        row('Head hash', facts.headHash)))),
      h('h3', {}, 'Client seeds'),
      h('div', { class: 'scroll' }, h('table', { 'data-testid': 'client-seeds' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Seat'), h('th', { scope: 'col' }, 'Player'), h('th', { scope: 'col' }, 'Client seed'))),
        h('tbody', {}, (facts.clientSeeds || []).map((join) => h('tr', {},
          h('td', {}, String(join.seat + 1)),
          h('td', {}, join.bot ? `${join.name} (bot)` : join.name),
          h('td', { class: 'mono' }, join.clientSeed === '' ? '(none)' : join.clientSeed)))))));
  }

  async showStep(label) {
    const step = this.report.steps[this.step - 1];
    const entry = this.report.entries[this.step - 1];
    label.value = `Entry ${step.seq} of ${this.report.steps.length}: ${entry.type}`;
    label.textContent = label.value;
    const request = ++this.request;
    let view = null;
    if (this.game) {
      view = await call('GET', `/v1/games/${encodeURIComponent(this.game)}/replay/${step.seq}`).then((answer) => answer.body, (error) => {
        say(error.message);
        return null;
      });
      if (request !== this.request) return;
    }
    replace(this.board,
      h('p', { class: 'muted' }, view ? serverLine(view) : `Hole ${step.hole || '—'}`,
        ` · stock ${step.stockCount} · discard ${step.discardCount}`),
      h('div', { class: 'opponents' }, step.players.map((player, seat) => h('div', { class: 'player small', 'data-seat': seat },
        h('div', { class: 'name' }, player.name, player.bot ? ` (bot: ${player.bot})` : ''),
        player.grid.length
          ? gridElement((position) => cardElement(player.grid[position].card, { faceDown: !player.grid[position].up }))
          : h('div', { class: 'muted' }, 'no cards yet'),
        h('div', {}, `Holes ${player.scores.join(', ') || '—'} · total ${player.total}`)))),
      h('div', { class: 'piles' },
        step.discardTop && h('div', { class: 'pile' }, cardElement(step.discardTop), h('div', { class: 'muted' }, 'Discard top')),
        step.drawn && h('div', { class: 'pile' }, cardElement(step.drawn.card), h('div', { class: 'muted' }, `${step.players[step.drawn.seat].name} drew from the ${step.drawn.source}`))),
      h('details', {}, h('summary', {}, 'This entry as logged'), h('pre', { class: 'mono' }, JSON.stringify(entry, null, 2))));
  }
}

function serverLine(view) {
  const turn = view.current_seat === null ? '' : ` · ${view.players[view.current_seat].name} to play`;
  const stage = view.stage ? ` · ${view.stage.replace('_', ' ')}` : '';
  return `Server's view at version ${view.version}: ${view.status}${view.hole ? `, hole ${view.hole}` : ''}${stage}${turn}`;
}
