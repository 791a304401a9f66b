// The replay viewer of a finished game: a step slider over its complete log (from the server's
// export, or an NDJSON file opened from disk), every card shown with face-down ones marked, the
// server's view at each step (GET /replay/{seq}), the server's audit result, the revealed seed,
// the client seeds, the page's own check of the log (audit.js), and the server's analysis of every
// decision along the slider (analysis.js).

import { analysisPanel, decisionLine, followAnalysis, markCard, placesOf, sliderMarks } from './analysis.js';
import { call } from './api.js';
import { auditLog } from './audit.js';
import { cardElement, gridElement } from './cards.js';
import { h, replace, sayError } from './dom.js';
import { formatNumber, formatTime, t } from './i18n.js';

export async function showReplay(main, game) {
  const status = h('p', { class: 'muted' }, t('replay.loading'));
  replace(main, h('h1', {}, t('replay.title', { game: game.slice(0, 8) })), h('section', { class: 'panel' }, status));
  let text;
  try {
    ({ body: text } = await call('GET', `/v1/games/${encodeURIComponent(game)}/export`));
  } catch (error) {
    replace(status);
    sayError(error);
    return;
  }
  const serverAudit = await call('GET', `/v1/games/${encodeURIComponent(game)}/audit`).then((answer) => answer.body, (error) => {
    sayError(error);
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
    replace(output, h('p', { class: 'muted' }, t('check.checking', { file: file.name })));
    const report = await auditLog(await file.text());
    new Viewer(output, report, { fileName: file.name }).render();
  });
  replace(main,
    h('section', { class: 'panel' },
      h('h1', {}, t('check.title')),
      h('p', {}, t('check.intro')),
      h('label', { class: 'field' }, h('span', {}, t('check.file')), input)),
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
    this.analysis = null;
    this.stepOfSeq = new Map(report.steps.map((step, index) => [step.seq, index + 1]));
    const last = report.steps.at(-1);
    this.names = last ? last.players.map((player) => player.name) : [];
  }

  render() {
    const count = this.report.steps.length;
    const slider = h('input', {
      type: 'range', min: 1, max: Math.max(count, 1), value: String(this.step), 'aria-label': t('replay.step'), 'data-testid': 'step',
    });
    const label = h('output', { 'data-testid': 'step-label' });
    const go = (step) => {
      this.step = Math.min(Math.max(step, 1), count);
      slider.value = String(this.step);
      this.showStep(label);
    };
    slider.addEventListener('input', () => go(Number(slider.value)));
    this.marks = h('div', { class: 'marks-holder' });
    this.decision = h('div', { 'aria-live': 'polite' });
    this.analysisSection = h('section', {});
    replace(this.main,
      this.game && h('h1', {}, t('replay.title', { game: this.game.slice(0, 8) })),
      this.checkPanel(),
      count > 0 && h('section', { class: 'panel' },
        h('h2', {}, t('replay.step')),
        h('div', { class: 'inline slider' },
          h('button', { type: 'button', class: 'secondary', onclick: () => go(this.step - 1), 'aria-label': t('replay.previous') }, '◀'),
          h('div', { class: 'track' }, slider, this.marks),
          h('button', { type: 'button', class: 'secondary', onclick: () => go(this.step + 1), 'aria-label': t('replay.next') }, '▶')),
        label,
        this.decision,
        this.board),
      this.game && count > 0 && this.analysisSection,
      this.factsPanel());
    if (count > 0) this.showStep(label);
    if (this.game && count > 0) this.followAnalysis((seq) => go(this.stepOfSeq.get(seq)), label);
  }

  // Shows the analysis as it comes: its panel, the slider's marks, and the current entry's decision.
  followAnalysis(goToSeq, label) {
    const status = { state: 'loading' };
    this.analysisSection.replaceWith(this.analysisSection = analysisPanel(status, this.names, goToSeq));
    followAnalysis(this.game, () => this.analysisSection.isConnected, (next) => {
      this.analysis = next.state === 'done' ? next.analysis : null;
      this.analysisSection.replaceWith(this.analysisSection = analysisPanel(next, this.names, goToSeq));
      if (!this.analysis) return;
      replace(this.marks, sliderMarks(this.analysis, this.report.steps.length, (seq) => this.stepOfSeq.get(seq)));
      this.showStep(label);
    });
  }

  checkPanel() {
    const report = this.report;
    const verdict = report.verified ? t('check.passed') : t('check.failed', { seq: report.firstBadSeq });
    const server = this.serverAudit;
    const serverVerdict = server && (server.verified === null || server.verified === undefined
      ? t('check.server.pending')
      : server.verified ? t('check.server.verified') : t('check.server.failed', { seq: server.first_bad_seq }));
    return h('section', { class: `panel check ${report.verified ? 'ok' : 'bad'}`, 'data-testid': 'check' },
      h('h2', {}, this.fileName ? t('check.of_file', { file: this.fileName }) : t('check.in_browser')),
      h('p', { class: 'verdict', 'data-testid': 'verdict', 'data-verified': String(report.verified), 'data-first-bad-seq': report.firstBadSeq === null ? '' : String(report.firstBadSeq) }, verdict),
      report.stacked && h('p', {}, report.stackedHoles.length
        ? t('check.stacked_holes', { count: report.stackedHoles.length, holes: report.stackedHoles.join(', ') })
        : t('check.stacked_fair')),
      h('ul', { class: 'checks' }, report.checks.map(({ check, outcome }) => h('li', { class: outcome, 'data-check': check },
        h('span', { class: 'outcome' }, t(`check.outcome.${outcome}`)), ` ${t(`check.${check}`)}`))),
      report.findings.length > 0 && h('ul', { class: 'findings', 'data-testid': 'findings' }, report.findings.map((finding) => h('li', {},
        t('check.finding', { seq: finding.seq, check: t(`check.${finding.check}`), message: t(`finding.${finding.key}`, finding.params) })))),
      server && h('p', { 'data-testid': 'server-audit' }, serverVerdict));
  }

  factsPanel() {
    const facts = this.report.facts;
    const row = (name, value) => h('tr', {}, h('th', { scope: 'row' }, name), h('td', { class: 'mono' }, value === undefined || value === null ? '—' : String(value)));
    return h('section', { class: 'panel facts' },
      h('h2', {}, t('facts.title')),
      h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': t('facts.title') }, h('table', {}, h('tbody', {},
        row(t('facts.game'), facts.gameId),
        row(t('facts.commitment'), facts.commitment),
        row(t('facts.seed'), facts.seed),
        row(t('facts.effective_seed'), facts.effectiveSeed),
        row(t('facts.head_hash'), facts.headHash)))),
      h('h3', {}, t('facts.client_seeds')),
      h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': t('facts.client_seeds') }, h('table', { 'data-testid': 'client-seeds' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('facts.seat')), h('th', { scope: 'col' }, t('table.player')), h('th', { scope: 'col' }, t('form.client_seed')))),
        h('tbody', {}, (facts.clientSeeds || []).map((join) => h('tr', {},
          h('td', {}, formatNumber(join.seat + 1)),
          h('td', {}, join.bot ? `${join.name} ${t('facts.bot_suffix')}` : join.name),
          h('td', { class: 'mono' }, join.clientSeed === '' ? t('facts.no_seed') : join.clientSeed)))))));
  }

  async showStep(label) {
    const step = this.report.steps[this.step - 1];
    const entry = this.report.entries[this.step - 1];
    label.value = t('replay.entry', { seq: step.seq, count: this.report.steps.length, type: entry.type, time: formatTime(entry.at) });
    label.textContent = label.value;
    const request = ++this.request;
    let view = null;
    if (this.game) {
      view = await call('GET', `/v1/games/${encodeURIComponent(this.game)}/replay/${step.seq}`).then((answer) => answer.body, (error) => {
        sayError(error);
        return null;
      });
      if (request !== this.request) return;
    }
    const decision = this.analysis && this.analysis.decisions.find((judged) => judged.seq === step.seq);
    replace(this.decision, decision
      ? decisionLine(decision, this.names, this.report.steps[this.step - 2])
      : this.analysis && h('p', { class: 'muted', 'data-testid': 'decision' }, t('analysis.no_decision')));
    this.showBoard(step, entry, view, decision);
  }

  // The table at `step`; the cards and pile that the `decision` made there played and named best
  // are marked.
  showBoard(step, entry, view, decision) {
    const best = decision ? placesOf(decision.best) : { positions: [], pile: null };
    const played = decision ? placesOf(decision.played) : { positions: [] };
    const card = (player, seat, position) => {
      const element = cardElement(player.grid[position].card, { faceDown: !player.grid[position].up });
      if (decision?.seat !== seat) return element;
      if (best.positions.includes(position)) return markCard(element, 'best');
      return played.positions.includes(position) ? markCard(element, 'played') : element;
    };
    const discardTop = step.discardTop && cardElement(step.discardTop);
    if (discardTop && best.pile === 'discard') markCard(discardTop, 'best');
    replace(this.board,
      h('p', {}, view ? serverLine(view) : t('replay.hole', { hole: step.hole || '—' }),
        ` · ${t('table.stock_count', { count: step.stockCount })} · ${t('table.discard_count', { count: step.discardCount })}`),
      h('div', { class: 'opponents' }, step.players.map((player, seat) => h('div', { class: 'player small', 'data-seat': seat },
        h('h3', { class: 'name' }, player.name, player.bot ? ` ${t('table.bot_suffix', { bot: t(`bot.${player.bot}`) })}` : '',
          step.knocked === seat ? ` ${t('table.knocked_suffix')}` : ''),
        player.grid.length
          ? gridElement((position) => card(player, seat, position), step.shape)
          : h('div', {}, t('replay.no_cards')),
        h('div', {}, t('replay.player_scores', { scores: player.scores.map(formatNumber).join(', ') || '—', total: player.total }))))),
      h('div', { class: 'piles' },
        best.pile === 'stock' && h('div', { class: 'pile', 'data-testid': 'stock' },
          markCard(cardElement(null, { label: t('table.stock_count', { count: step.stockCount }) }), 'best'), h('div', {}, t('analysis.stock'))),
        discardTop && h('div', { class: 'pile', 'data-testid': 'discard' }, discardTop, h('div', {}, t('replay.discard_top'))),
        step.drawn && h('div', { class: 'pile' }, cardElement(step.drawn.card),
          h('div', {}, t(`table.they_drew.${step.drawn.source}`, { name: step.players[step.drawn.seat].name })))),
      h('details', {}, h('summary', {}, t('replay.as_logged')), h('pre', { class: 'mono' }, JSON.stringify(entry, null, 2))));
  }
}

function serverLine(view) {
  const stage = view.stage ? ` · ${t(`stage.${view.stage}`)}` : '';
  const turn = view.current_seat === null ? '' : ` · ${t('replay.to_play', { name: view.players[view.current_seat].name })}`;
  const hole = view.hole ? `, ${t('replay.hole', { hole: view.hole })}` : '';
  return `${t('replay.server_view', { version: view.version, status: t(`game.status.${view.status}`) })}${hole}${stage}${turn}`;
}
