// What the journeys share: Debian's Chromium through playwright-core, a fresh browser context
// per visitor, the database (as the owner role, to check what a journey really wrote), axe-core,
// and screenshots under target/web-screenshots/.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import pg from 'pg';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';

const require = createRequire(import.meta.url);

export const base = () => inject('baseUrl');
export const artifacts = () => inject('artifacts');

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (cargo xtask test does, as root)`);
  // playwright-core gives every launch a fresh, empty --user-data-dir of its own.
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
  });
}

/** Exceptions any page threw; each test ends by finding none. */
export const pageErrors: string[] = [];

export const DESKTOP = { width: 1280, height: 800 };
export const MOBILE = { width: 390, height: 844 };

/** Records what `page` throws and every Content-Security-Policy violation it reports (the site
 * sends a strict policy; a page that breaks it is a failure like an exception). */
export function watch(page: Page) {
  page.on('pageerror', (e) => pageErrors.push(`${page.url()}: ${e.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) {
      pageErrors.push(`${page.url()}: CSP: ${message.text()}`);
    }
  });
}

/** A new visitor: a context of its own (its own cookies), on the site. */
export async function visitor(browser: Browser, viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: base(), viewport, reducedMotion: 'reduce' });
  const page = await context.newPage();
  watch(page);
  return { context, page };
}

/** The visitor's id, as the session route says (null before a visit starts). */
export async function visitorId(page: Page): Promise<string | null> {
  return page.evaluate(async () => {
    const r = await fetch('/api/session');
    const body = (await r.json()) as { visitor: { id: string } | null };
    return body.visitor?.id ?? null;
  });
}

let pool: pg.Pool | undefined;

/** A query as the owner role (row-level security bypassed): what the database really holds. */
export async function sql<T extends pg.QueryResultRow = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  pool ??= new pg.Pool({ connectionString: inject('databaseUrl'), max: 2 });
  const result = await pool.query<T>(text, values);
  return result.rows;
}

export async function closeDatabase() {
  await pool?.end();
  pool = undefined;
}

/** Asks a question on /chat through the composer and waits for the exchange to settle. */
export async function ask(page: Page, question: string) {
  const input = page.getByLabel('Ask about your ledger');
  await input.fill(question);
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  await waitSettled(page);
}

/** Waits until no exchange is running (the stream ended, or stopped at a write). */
export async function waitSettled(page: Page) {
  await page.waitForFunction(() => !document.querySelector('.answer[aria-busy="true"]'), undefined, { timeout: 30_000 });
}

export async function screenshot(page: Page, name: string) {
  const dir = resolve(artifacts(), 'web-screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: resolve(dir, `${name}.png`), fullPage: false });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** axe-core's serious and critical findings on the page as it is now. */
export async function axe(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the browser's debugging protocol, which the site's Content-Security-Policy
  // does not govern: an injected <script> would be refused, as it should be.
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const violations = await page.evaluate(async () => {
    const w = window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> } };
    const result = await w.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** The page is no wider than its viewport: nothing sticks out sideways. */
export async function overflow(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= width + 1) return null;
    const wide = [...document.querySelectorAll('body *')]
      .filter((el) => {
        const r = el.getBoundingClientRect();
        if (r.right <= width + 1) return false;
        // Inside a scroller of its own (a wide table), sticking out is the scroller's business.
        for (let p = el.parentElement; p; p = p.parentElement) {
          const o = getComputedStyle(p).overflowX;
          if (o === 'auto' || o === 'scroll' || o === 'hidden') return false;
        }
        return true;
      })
      .slice(0, 3)
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} (right ${Math.round(el.getBoundingClientRect().right)}px)`);
    return `the page is ${document.documentElement.scrollWidth}px wide in a ${width}px viewport: ${wide.join(', ')}`;
  });
}
