// What the browser tests share: the server's address and the screenshot folder (set by
// scripts/test-web), Chromium launched through playwright-core, pages whose console errors are
// collected, the API called directly, and axe-core's check of a page.

import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium } from 'playwright-core';

export const BASE = process.env.GOLF_URL;
export const OUT = process.env.E2E_OUT;
export const STEP_TIMEOUT = 15_000;
assert.ok(BASE && OUT, 'GOLF_URL and E2E_OUT must be set (scripts/test-web sets them)');
mkdirSync(OUT, { recursive: true });

export const CHROMIUM = {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
};

export const launch = () => chromium.launch(CHROMIUM);
export const launchPersistent = (profile, options) => chromium.launchPersistentContext(profile, { ...CHROMIUM, ...options });

// A new page of `context` whose console errors and page errors are collected.
export async function openPage(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT);
  const errors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return { page, context: { close: () => page.close() }, errors };
}

export async function api(method, path, { body, token, expect } = {}) {
  const headers = {};
  if (body) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(BASE + path, { method, headers, body: body && JSON.stringify(body) });
  const text = await response.text();
  if (expect) assert.equal(response.status, expect, `${method} ${path}: ${text}`);
  else assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return /^application\/(problem\+)?json/.test(response.headers.get('content-type') || '') ? JSON.parse(text) : text;
}

// Runs axe-core on the page as it is (every rule axe runs by default, WCAG and best practices);
// prints and records the count, and fails on any violation.
export async function axe(page, name) {
  const { violations, passes } = await new AxeBuilder({ page }).analyze();
  const line = `axe ${name}: ${violations.length} violations (${passes.length} rules passed)`;
  console.log(line);
  appendFileSync(join(OUT, 'axe.txt'), `${line}\n`);
  assert.deepEqual(violations.map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`), [], `axe on ${name}`);
}

// The widths the layout must hold: a 360-pixel phone, and a 1280-pixel screen at 200% zoom.
export const PHONE = { width: 360, height: 740 };
export const ZOOMED = { width: 640, height: 450 };
export const DESKTOP = { width: 1280, height: 900 };

// Saves the page at desktop and phone widths as NAME-desktop.png and NAME-phone.png, and checks
// that nothing is wider than the phone or the zoomed screen.
export async function screenshots(page, name) {
  await page.screenshot({ path: join(OUT, `${name}-desktop.png`), fullPage: true });
  for (const [size, label] of [[PHONE, 'phone'], [ZOOMED, 'zoom']]) {
    await page.setViewportSize(size);
    if (label === 'phone') await page.screenshot({ path: join(OUT, `${name}-phone.png`), fullPage: true });
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= size.width, `${name} fits ${size.width} px (${label}): ${width} px`);
  }
  await page.setViewportSize(DESKTOP);
}
