// What a visitor, a signed-up user and the operator do on the site, on the scripted demo model,
// each journey checked twice: what the person sees, and what the database holds.

import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createHash, createSign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { strFromU8, unzipSync } from 'fflate';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, OUTBOX, REPO, startDev } from './global-setup';
import { DESKTOP, MOBILE, artifacts, pageErrors, ask, axe, closeDatabase, launch, overflow, screenshot, sql, visitor, visitorId, waitSettled, watch } from './support';

let browser: Browser;

beforeAll(async () => {
  browser = await launch();
});

afterEach(() => {
  expect(pageErrors.splice(0), 'no page threw').toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await closeDatabase();
});

async function budget(owner: string, category: string, month = '2025-06') {
  return sql<{ amount_minor: string }>(
    `SELECT b.amount_minor::text FROM budgets b JOIN accounts a ON a.id = b.account_id AND a.owner_id = b.owner_id
     WHERE b.owner_id = $1 AND a.name = $2 AND b.month = $3`,
    [owner, category, month],
  );
}

async function signInAsOperator(page: Page) {
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(OPERATOR.email);
  await page.getByLabel('Password').fill(OPERATOR.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/admin');
}

describe('a visitor on /chat', () => {
  it('asks a question and sees the streamed answer, with its tools and cost in the margin', async () => {
    const { context, page } = await visitor(browser);
    const loaded: { url: string; type: string }[] = [];
    page.on('response', (r) => {
      const type = r.request().resourceType();
      if (type === 'script' || type === 'stylesheet') loaded.push({ url: r.url(), type });
    });
    await page.goto('/chat');
    await page.getByRole('button', { name: /What did I spend on groceries in March 2025\?/ }).click();
    await waitSettled(page);
    const answer = page.locator('.exchange').first();
    await expect.poll(() => answer.locator('.answer').innerText()).toContain('₹23,350.00');
    await expect.poll(() => answer.locator('.entry .mono').first().innerText()).toBe('get_spend_report');
    await expect.poll(() => answer.getByRole('link', { name: 'Read the trace →' }).count()).toBe(1);

    // Measured, not asserted: navigation start → the first streamed token on screen, and what
    // /chat downloads (gzipped as a server would send it), written for the closing figures.
    const firstToken = await page.evaluate(() => performance.getEntriesByName('kakeibo:first-token')[0]?.startTime ?? null);
    expect(firstToken, 'the first token was painted').not.toBeNull();
    const sizes = { js: 0, css: 0 };
    for (const file of loaded) {
      const path = new URL(file.url).pathname;
      const bytes = readFileSync(resolve(REPO, 'web', 'dist', `.${path}`));
      sizes[file.type === 'script' ? 'js' : 'css'] += gzipSync(bytes, { level: 9 }).length;
    }
    const metrics = {
      firstTokenMs: Math.round(firstToken ?? 0),
      gzippedJsBytes: sizes.js,
      gzippedCssBytes: sizes.css,
      files: loaded.map((f) => new URL(f.url).pathname),
    };
    const dir = resolve(artifacts(), 'web-e2e');
    mkdirSync(dir, { recursive: true });
    writeFileSync(resolve(dir, 'chat-metrics.json'), JSON.stringify(metrics, null, 2));
    console.log(
      `/chat: first streamed token painted ${metrics.firstTokenMs} ms after navigation start (scripted model); ` +
        `it loads ${(sizes.js / 1024).toFixed(1)} KiB of JavaScript and ${(sizes.css / 1024).toFixed(1)} KiB of CSS, gzipped`,
    );

    const owner = await visitorId(page);
    const runs = await sql<{ status: string; model: string }>('SELECT status::text, model FROM trace_runs WHERE owner_id = $1', [owner]);
    expect(runs).toEqual([{ status: 'ok', model: 'scripted-demo' }]);
    const calls = await sql('SELECT 1 FROM trace_events WHERE owner_id = $1 AND type = \'tool_call\' AND payload->>\'name\' = \'get_spend_report\'', [owner]);
    expect(calls).toHaveLength(1);

    // The conversation has its own address; /chat?new is a new conversation, not more of this one.
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/chat\/[0-9a-f-]{36}$/);
    const first = new URL(page.url()).pathname;
    await page.goto('/chat?new');
    await ask(page, 'How much did I spend?');
    await waitSettled(page);
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/chat\/[0-9a-f-]{36}$/);
    expect(new URL(page.url()).pathname).not.toBe(first);
    const conversations = await sql('SELECT id FROM conversations WHERE owner_id = $1', [owner]);
    expect(conversations).toHaveLength(2);
    await context.close();
  });

  it('opens the rows behind a figure of the answer, their sum the figure; a wrong figure is marked', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'How much did I spend in June 2025?');
    await waitSettled(page);
    const answer = page.locator('.exchange').first();
    const total = answer.getByRole('button', { name: '₹1,40,619.00' });
    await expect.poll(() => total.count()).toBe(1);
    // Every figure of the demo's answer was found in the ledger's results.
    await expect.poll(() => answer.locator('.figure-link').count()).toBe(4);
    await expect.poll(() => answer.locator('.figures-checked').innerText()).toContain('All 4 figures here were found');
    // The margin shows the report's headline figure, not a clipped result.
    await expect.poll(() => answer.locator('.entry-result').first().innerText()).toBe('total spending: ₹1,40,619.00');
    await total.click();
    const panel = answer.locator('.figure-rows');
    await expect.poll(() => panel.locator('.figure-sum').innerText()).toMatch(/sum of all \d+ rows is ₹1,40,619\.00, the figure the tool returned\./);
    const listed = await panel.locator('tbody tr').count();
    const owner = await visitorId(page);
    const [june] = await sql<{ n: string; total: string }>(
      `SELECT count(*)::text AS n, sum(p.amount_minor)::text AS total FROM postings p
       JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
       JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
       WHERE p.owner_id = $1 AND a.type = 'expense' AND t.date BETWEEN '2025-06-01' AND '2025-06-30'
         AND NOT (a.name = 'Uncategorized' AND p.amount_minor < 0)`,
      [owner],
    );
    expect(june).toEqual({ n: String(listed), total: '14061900' });
    expect(await axe(page)).toEqual([]);
    await screenshot(page, 'figure-rows');
    await context.close();

    // A model that states a figure no tool returned: marked in the answer, and said in words.
    const dev = await startDev({ KAKEIBO_PROVIDER: `script:${resolve(REPO, 'fixtures', 'scripts', 'wrong-figure.yaml')}` });
    try {
      const wrong = await browser.newContext({ baseURL: dev.base, viewport: DESKTOP });
      const page2 = await wrong.newPage();
      watch(page2);
      await page2.goto('/chat');
      await ask(page2, 'How much did I spend in June 2025?');
      await waitSettled(page2);
      const answer2 = page2.locator('.exchange').first();
      await expect.poll(() => answer2.locator('mark.figure-ungrounded').innerText()).toBe('₹99,999.99');
      await expect.poll(() => answer2.locator('.note').innerText()).toContain("₹99,999.99 was not found in your ledger's results");
      await expect.poll(() => answer2.getByRole('button', { name: '₹1,40,619.00' }).count()).toBe(1);
      const owner2 = await visitorId(page2);
      const traced = await sql<{ ungrounded: string }>(
        "SELECT payload->'figures'->>'ungrounded' AS ungrounded FROM trace_events WHERE owner_id = $1 AND type = 'model_call' AND payload ? 'figures'",
        [owner2],
      );
      expect(traced).toEqual([{ ungrounded: '1' }]);
      await screenshot(page2, 'figure-ungrounded');
      await wrong.close();
    } finally {
      await dev.stop();
    }

    // FIGURES=retry: the model is asked once to correct; the page shows the corrected answer and says so.
    const retry = await startDev({ KAKEIBO_PROVIDER: `script:${resolve(REPO, 'fixtures', 'scripts', 'figure-retry.yaml')}`, FIGURES: 'retry' });
    try {
      const corrected = await browser.newContext({ baseURL: retry.base, viewport: DESKTOP });
      const page3 = await corrected.newPage();
      watch(page3);
      await page3.goto('/chat');
      await ask(page3, 'How much did I spend in June 2025?');
      await waitSettled(page3);
      const answer3 = page3.locator('.exchange').first();
      await expect.poll(() => answer3.locator('.note').first().innerText()).toContain('The first answer stated ₹99,999.99');
      await expect.poll(() => answer3.locator('.prose').innerText()).toBe('In June 2025 you spent ₹1,40,619.00 in all; the largest group was Rent at ₹32,000.00.');
      await expect.poll(() => answer3.locator('.figure-link').count()).toBe(2);
      expect(await answer3.locator('mark.figure-ungrounded').count()).toBe(0);
      const owner3 = await visitorId(page3);
      const calls = await sql("SELECT 1 FROM trace_events WHERE owner_id = $1 AND type = 'model_call'", [owner3]);
      expect(calls).toHaveLength(3);
      await screenshot(page3, 'figure-corrected');
      await corrected.close();
    } finally {
      await retry.stop();
    }
  });

  it("shows the model's task list in the margin when the operator turns it on", async () => {
    const dev = await startDev({ KAKEIBO_PROVIDER: `script:${resolve(REPO, 'fixtures', 'scripts', 'tasks.yaml')}`, TASK_LIST: 'on' });
    try {
      const context = await browser.newContext({ baseURL: dev.base, viewport: DESKTOP });
      const page = await context.newPage();
      watch(page);
      await page.goto('/chat');
      await ask(page, 'Review my subscriptions');
      await waitSettled(page);
      const answer = page.locator('.exchange').first();
      await expect.poll(() => answer.locator('.prose').innerText()).toBe('I went through your regular payments: look at the largest first.');
      const tasks = answer.locator('.tasks .task');
      await expect.poll(() => tasks.count()).toBe(3);
      expect(await answer.locator('.task-completed').count()).toBe(2);
      expect(await answer.locator('.task-in-progress').innerText()).toContain('Say which to look at');
      expect(await answer.locator('.tasks').getAttribute('aria-label')).toBe('Task list: 2 of 3 done');
      // The list the tool refused is an entry that failed; the ones it took are not entries.
      const names = await answer.locator('.entry-name .mono').allInnerTexts();
      expect(names).toEqual(['detect_recurring', 'todo_write']);
      expect(await axe(page)).toEqual([]);
      await screenshot(page, 'task-list');
      await context.close();
    } finally {
      await dev.stop();
    }
  });

  it("shows a subagent's calls in the margin when the operator turns subagents on", async () => {
    const dev = await startDev({ KAKEIBO_PROVIDER: `script:${resolve(REPO, 'fixtures', 'scripts', 'subagents.yaml')}`, SUBAGENTS: 'on' });
    try {
      const context = await browser.newContext({ baseURL: dev.base, viewport: DESKTOP });
      const page = await context.newPage();
      watch(page);
      await page.goto('/chat');
      await ask(page, 'Hand the subscription review to a subagent');
      await waitSettled(page);
      const answer = page.locator('.exchange').first();
      await expect.poll(() => answer.locator('.prose').innerText()).toMatch(/^The subagent reports: \d+ regular payments, and the balances of your accounts\.$/);
      const entry = answer.locator('.entry-subagent');
      await expect.poll(() => entry.count()).toBe(1);
      expect(await entry.locator('.entry-args').innerText()).toBe('Review the regular payments');
      const sub = entry.locator('.sub-entries > .entry');
      await expect.poll(() => sub.allInnerTexts()).toEqual(['detect_recurring ran', 'get_balances ran']);
      expect(await entry.locator(':scope > .entry-result').innerText()).toBe('answered');
      expect(await axe(page)).toEqual([]);
      await screenshot(page, 'subagent');
      const trace = await answer.locator('.trace-link').getAttribute('href');

      // Read back after a reload: the same line, from the stored conversation.
      await page.reload();
      const again = page.locator('.exchange').first().locator('.entry-subagent');
      await expect.poll(() => again.locator('.sub-entries > .entry').allInnerTexts()).toEqual(['detect_recurring ran', 'get_balances ran']);

      // The traces link: the run names its subagent's run, which names it back.
      await page.goto(trace ?? '/runs');
      const subs = page.locator('.run-subagents li');
      await expect.poll(() => subs.count()).toBe(1);
      expect(await subs.first().innerText()).toContain('Review the regular payments');
      await screenshot(page, 'run-subagents');
      const parentUrl = page.url();
      await subs.first().locator('a').click();
      await expect.poll(() => page.locator('.run-parent').innerText()).toContain("A subagent's run");
      const calls = await page.locator('.timeline').innerText();
      expect(calls).toContain('detect_recurring');
      expect(calls).toContain('get_balances');
      expect(await axe(page)).toEqual([]);
      await screenshot(page, 'run-subagent-child');
      await page.locator('.run-parent a').click();
      await expect.poll(() => page.url()).toBe(parentUrl);
      expect(await axe(page)).toEqual([]);
      await context.close();
    } finally {
      await dev.stop();
    }
  });

  it('proposes a write, allows it, reads the resumed answer and finds the budget on the dashboard', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'Set a ₹20,000 monthly budget for Groceries.');
    const slip = page.locator('.slip');
    await expect.poll(() => slip.getByRole('heading').innerText()).toBe('This will change your ledger');
    await expect.poll(() => slip.locator('.slip-summary').innerText()).toMatch(/Groceries/);
    await slip.getByText('The exact arguments').click();
    await expect.poll(() => slip.locator('.arg-table').innerText()).toContain('2000000 minor units');
    const owner = await visitorId(page);
    expect(await budget(owner!, 'Groceries'), 'nothing is written before the decision').toEqual([]);

    const confirms: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/api/confirm')) confirms.push(r.postData() ?? '');
    });
    // A double click sends the decision once.
    await slip.getByRole('button', { name: 'Allow', exact: true }).dblclick();
    await waitSettled(page);
    await expect.poll(() => slip.locator('.slip-verdict').innerText()).toBe('Allowed. Done.');
    expect(confirms, 'one POST /api/confirm').toHaveLength(1);
    await expect.poll(() => page.locator('.exchange .answer').innerText()).toContain('₹20,000.00');
    // The confirm stream says what the write returned: the margin entry shows it written.
    await expect.poll(() => page.locator('.entry .entry-result').first().innerText()).toMatch(/^written/);
    expect(await budget(owner!, 'Groceries')).toEqual([{ amount_minor: '2000000' }]);

    await page.getByRole('link', { name: 'dashboard' }).click();
    const budgets = page.locator('#budgets');
    await expect.poll(() => budgets.locator('table').innerText(), { timeout: 15_000 }).toContain('Groceries');
    await expect.poll(() => budgets.locator('table').innerText()).toContain('₹20,000.00');
    await context.close();
  });

  it('declines a write, and nothing changes', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'Please set a dining budget.');
    const slip = page.locator('.slip');
    // The card takes the focus on its heading, never on Allow: a stray Enter decides nothing.
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('H3');
    await page.keyboard.press('Enter');
    await page.waitForTimeout(300);
    expect(await slip.getAttribute('data-status'), 'Enter on the card decides nothing').toBe('pending');
    await slip.getByRole('button', { name: 'Decline', exact: true }).click();
    await waitSettled(page);
    await expect.poll(() => slip.locator('.slip-verdict').innerText()).toBe('Declined. Nothing was changed.');
    await expect.poll(() => page.locator('.exchange .answer').innerText()).toMatch(/Nothing was changed/);
    const owner = await visitorId(page);
    expect(await budget(owner!, 'Dining')).toEqual([]);
    const confirms = await sql<{ allowed: boolean }>(
      "SELECT (payload->>'allowed')::boolean AS allowed FROM trace_events WHERE owner_id = $1 AND type = 'confirm' AND payload ? 'expired'",
      [owner],
    );
    expect(confirms).toEqual([{ allowed: false }]);
    await context.close();
  });

  it('decides a batch of two writes, one allowed and one declined, sent together', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    const confirms: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/api/confirm')) confirms.push(r.postData() ?? '');
    });
    await ask(page, 'Set budgets for Dining and Transport for June 2025.');
    const slip = page.locator('.slip');
    await expect.poll(() => slip.getByRole('heading').innerText()).toBe('These 2 writes will change your ledger');
    const send = slip.getByRole('button', { name: 'Send 2 decisions' });
    expect(await send.isDisabled(), 'not before every write is decided').toBe(true);
    const choices = slip.locator('.slip-choice');
    await choices.nth(0).getByRole('button', { name: 'Allow' }).click();
    expect(await send.isDisabled()).toBe(true);
    await choices.nth(1).getByRole('button', { name: 'Decline' }).click();
    // The heading follows the decisions, and each chosen button says it is chosen.
    await expect.poll(() => slip.getByRole('heading').innerText()).toBe('1 of these 2 writes will change your ledger');
    expect(await choices.nth(1).locator('.slip-chosen').innerText()).toBe('will not be written');
    await send.click();
    await waitSettled(page);
    await expect.poll(() => slip.locator('.slip-verdict').innerText()).toBe('1 of 2 allowed and done; the others changed nothing.');
    expect(confirms).toHaveLength(1);
    const body = JSON.parse(confirms[0]!) as { decisions: { id: string; allowed: boolean }[] };
    expect(body.decisions.map((d) => d.allowed)).toEqual([true, false]);
    const owner = await visitorId(page);
    expect(await budget(owner!, 'Dining')).toEqual([{ amount_minor: '800000' }]);
    expect(await budget(owner!, 'Transport')).toEqual([]);
    await context.close();
  });

  it('uploads the sample statement, previews, imports, sees the rows, and a second upload adds nothing', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await page.getByRole('button', { name: 'Statement' }).click();
    await page.getByRole('button', { name: 'Use the sample statement' }).click();
    const preview = page.locator('.preview');
    await expect.poll(() => preview.getByRole('heading').innerText(), { timeout: 20_000 }).toMatch(/^12 rows to add from/);
    await expect.poll(() => preview.locator('.preview-figures').innerText()).toMatch(/duplicates skipped/i);
    // The rows a person checks before saying yes: the first and last three, with their direction,
    // and every line of the file accounted for.
    const rowsTable = await preview.locator('.ledger-table').innerText();
    expect(rowsTable).toMatch(/SALARY JUL 2025 ACME TECHNOLOGIES\s+in/);
    expect(rowsTable).toMatch(/RENT JULY FLAT 4B\s+out/);
    expect(rowsTable).toMatch(/… 6 more rows/);
    expect(rowsTable).toMatch(/JIO PREPAID RECHARGE\s+out/);
    expect(await preview.locator('.preview-lines').innerText()).toBe('13 lines in the file: 1 header, 12 to add');
    expect(await preview.locator('.preview-layout').innerText()).toMatch(/^Comma-separated, UTF-8, header on line 1\. Dates from “Date”, day-first/);
    await expect.poll(() => preview.locator('.preview-figures').innerText()).toMatch(/balance check\s+Reconciled against the balance column \(“Balance”\): 11 of 11 balance changes agree/i);
    // The statement names no currency: it is read in Checking's, and a person may say otherwise.
    const currency = preview.getByLabel('currency');
    expect(await currency.inputValue()).toBe('INR');
    await currency.selectOption('EUR');
    await expect.poll(() => preview.locator('.preview-kind').innerText(), { timeout: 20_000 }).toMatch(/Checking \(EUR\): a new checking account in EUR/);
    expect(await preview.locator('.preview-layout').innerText()).toMatch(/Currency: EUR, as asked\./);
    await preview.getByLabel('currency').selectOption('INR');
    await expect.poll(() => preview.locator('.preview-kind').innerText(), { timeout: 20_000 }).toMatch(/Checking: an existing checking account in INR/);
    const owner = await visitorId(page);
    const july = () => sql("SELECT 1 FROM transactions WHERE owner_id = $1 AND date >= '2025-07-01'", [owner]);
    expect(await july(), 'a preview writes nothing').toHaveLength(0);

    await preview.getByRole('button', { name: 'Import 12 rows' }).click();
    await waitSettled(page);
    const slip = page.locator('.slip');
    await expect.poll(() => slip.locator('.label').first().innerText()).toBe('IMPORT_STATEMENT_CSV');
    // The card says what the plan adds, in words and figures, never a plan id.
    const card = await slip.locator('.slip-summary').innerText();
    expect(card).toMatch(/^Add 12 rows \(\d+–\d+ Jul 2025; in ₹[\d,]+\.\d\d, out ₹[\d,]+\.\d\d\) to Checking \(INR\)$/);
    const [conversation] = await sql<{ title: string }>('SELECT title FROM conversations WHERE owner_id = $1', [owner]);
    expect(conversation?.title).toBe('Import sample-statement.csv: 12 rows into Checking.');
    await slip.getByRole('button', { name: 'Allow', exact: true }).click();
    await waitSettled(page);
    await expect.poll(() => slip.locator('.slip-verdict').innerText()).toBe('Allowed. Done.');
    await expect.poll(() => page.locator('.exchange .answer').last().innerText()).toMatch(/12/);
    expect(await july()).toHaveLength(12);

    await page.getByRole('link', { name: 'dashboard' }).click();
    await expect.poll(() => page.locator('h1').innerText(), { timeout: 15_000 }).toBe('July 2025');
    await expect.poll(() => page.locator('#entries table').innerText()).toContain('BIGBASKET ORDER 88123');

    await page.getByRole('link', { name: 'chat' }).click();
    await page.getByRole('button', { name: 'Statement' }).click();
    await page.getByRole('button', { name: 'Use the sample statement' }).click();
    await expect.poll(() => page.locator('.preview-nothing').innerText(), { timeout: 20_000 }).toBe(
      'Nothing new: all 12 rows are already in your ledger.',
    );
    expect(await page.getByRole('button', { name: /^Import/ }).count()).toBe(0);
    expect(await july()).toHaveLength(12);
    const uploads = () => sql('SELECT 1 FROM uploads WHERE owner_id = $1', [owner]);
    expect(await uploads(), 'the sample again is the same upload').toHaveLength(1);

    // The privacy page lists it, imported, and deletes it; the rows it added stay.
    await page.goto('/privacy#statements');
    const statements = page.locator('#statements');
    await expect.poll(() => statements.locator('.statement-row').innerText(), { timeout: 15_000 }).toMatch(
      /sample-statement\.csv \(the sample\)[\s\S]*imported .+, 12 rows added/,
    );
    await statements.getByRole('button', { name: 'Delete sample-statement.csv' }).click();
    await expect.poll(() => statements.innerText()).toMatch(/No statements kept/);
    expect(await uploads()).toHaveLength(0);
    expect(await july()).toHaveLength(12);
    await context.close();
  });

  it('imports a household of three statements into new accounts: transfers paired, spending and net worth true', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    const owner = async () => (await visitorId(page))!;
    const household = (file: string) => resolve(REPO, 'fixtures/household', file);
    // Each statement into a new account of its own, read in US dollars; the card's kind comes from its rows.
    const statements: [string, string, string, number][] = [
      ['checking.csv', 'US Checking', 'checking', 9],
      ['card.csv', 'US Card', 'card', 8],
      ['savings.csv', 'US Savings', 'savings', 3],
    ];
    for (const [file, account, kind, rows] of statements) {
      await page.getByRole('button', { name: 'Statement' }).click();
      await page.locator('.upload input[type=file]').setInputFiles(household(file));
      const preview = page.locator('.preview');
      await expect.poll(() => preview.locator('h3.subhead').innerText(), { timeout: 20_000 }).toMatch(/rows? to add from/);
      await preview.getByLabel('into').selectOption({ label: 'A new account…' });
      await preview.getByLabel("New account's name").fill(account);
      const kindBox = preview.getByLabel("New account's kind");
      // A card says what it is by its rows (Sale, Payment, Return); the person names the others' kind.
      if (file === 'card.csv') expect(await kindBox.inputValue(), `${file}: the kind the statement says`).toBe('card');
      await kindBox.selectOption(kind);
      await preview.getByRole('button', { name: 'Read it into this account' }).click();
      await expect.poll(() => preview.locator('.preview-kind').innerText(), { timeout: 20_000 }).toContain(`${account}: a new ${kind} account`);
      await preview.getByLabel('currency').selectOption('USD');
      await expect.poll(() => preview.locator('.preview-kind').innerText(), { timeout: 20_000 }).toContain('account in USD');
      await expect.poll(() => preview.locator('h3.subhead').innerText()).toMatch(new RegExp(`^${rows} rows to add from`));
      if (file === 'card.csv') {
        // Both payments meet their other side, already in US Checking.
        const transfers = preview.locator('.preview-transfers');
        await expect.poll(() => transfers.locator('li[data-status="paired"]').count()).toBe(2);
        expect(await transfers.innerText()).toMatch(/one transfer with US Checking on 2025-10-12/);
        await screenshot(page, 'household-card-preview');
      }
      if (file === 'checking.csv') {
        expect(await preview.locator('.preview-figures').innerText()).toMatch(/opening balance\s+\$2,000\.00 on 2025-09-30/i);
      }
      await preview.getByRole('button', { name: `Import ${rows} rows` }).click();
      await waitSettled(page);
      const slip = page.locator('.slip').last();
      await slip.getByRole('button', { name: 'Allow', exact: true }).click();
      await waitSettled(page);
      await expect.poll(() => slip.locator('.slip-verdict').innerText()).toMatch(/^Allowed/);
    }
    // What the ledger holds: four transfers, none in a category, nothing left in transit.
    const transfers = await sql<{ n: string }>(
      `SELECT count(*)::text AS n FROM transactions t WHERE t.owner_id = $1 AND t.paired_source_hash IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
                         WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id AND a.type IN ('expense', 'income'))`,
      [await owner()],
    );
    expect(transfers[0]?.n).toBe('4');

    await page.goto('/dashboard?month=2025-10');
    await expect.poll(() => page.locator('h1').innerText(), { timeout: 15_000 }).toBe('October 2025');
    // The spending of the household (the card's payments and the savings transfers are not in it),
    // and its net worth in dollars beside the demo ledger's rupees: the figures the CLI's tests hold.
    await expect.poll(() => page.locator('.figures').first().innerText()).toContain('$2,191.73');
    const accounts = page.locator('#accounts');
    await expect.poll(() => accounts.locator('.figures').innerText()).toContain('$12,816.85');
    const table = await accounts.locator('.accounts-table').innerText();
    expect(table).toMatch(/US Checking\s+checking\s+\d+\s+\$2,443\.26/);
    expect(table).toMatch(/US Card\s+card\s+\d+\s+\$65\.01/);
    expect(table).toMatch(/US Savings\s+savings\s+\d+\s+\$10,308\.58/);
    expect(await accounts.locator('.in-transit').count()).toBe(0);
    await accounts.scrollIntoViewIfNeeded();
    await screenshot(page, 'household-dashboard-accounts');
    // The home currency is the demo ledger's until the person changes it; accounts keep theirs.
    const home = accounts.getByLabel('Home currency');
    expect(await home.inputValue()).toBe('INR');
    await home.selectOption('USD');
    await accounts.getByRole('button', { name: 'Change' }).click();
    await expect.poll(() => accounts.locator('.home-currency [role=status]').innerText()).toMatch(/now USD/);
    const stored = await sql<{ c: string }>('SELECT home_currency AS c FROM users WHERE id = $1', [await owner()]);
    expect(stored[0]?.c).toBe('USD');
    await context.close();
  });

  it('imports an OFX and a camt statement: each into the account it names, its balance checked, a second upload adds nothing', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    const ofx = Buffer.from(
      'OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nCHARSET:1252\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD\n' +
        '<BANKACCTFROM><BANKID>021000021<ACCTID>000123456789<ACCTTYPE>CHECKING</BANKACCTFROM>\n<BANKTRANLIST>\n' +
        '<STMTTRN><TRNTYPE>POS<DTPOSTED>20250905120000[-5:EST]<TRNAMT>-4.50<FITID>A1<NAME>OFX COFFEE</STMTTRN>\n' +
        '<STMTTRN><TRNTYPE>POS<DTPOSTED>20250905120000[-5:EST]<TRNAMT>-4.50<FITID>A2<NAME>OFX COFFEE</STMTTRN>\n' +
        '<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20250906<TRNAMT>250.00<FITID>A3<NAME>OFX REFUND</STMTTRN>\n' +
        '</BANKTRANLIST><LEDGERBAL><BALAMT>1241.00<DTASOF>20250930</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n',
    );
    const camt = Buffer.from(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>\n' +
        '<Stmt><Id>1</Id><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Tp><Cd>CACC</Cd></Tp><Ccy>EUR</Ccy></Acct>\n' +
        '<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">100.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2025-09-01</Dt></Dt></Bal>\n' +
        '<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">80.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2025-09-30</Dt></Dt></Bal>\n' +
        '<Ntry><Amt Ccy="EUR">20.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2025-09-10</Dt></BookgDt>' +
        '<AcctSvcrRef>R1</AcctSvcrRef><NtryDtls><TxDtls><RltdPties><Cdtr><Pty><Nm>CAMT BAKERY</Nm></Pty></Cdtr></RltdPties></TxDtls></NtryDtls></Ntry>\n' +
        '<Ntry><Amt Ccy="EUR">9.99</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>PDNG</Cd></Sts><BookgDt><Dt>2025-09-30</Dt></BookgDt></Ntry>\n' +
        '</Stmt></BkToCstmrStmt></Document>\n',
    );
    const cases: [string, string, Buffer, RegExp, string, number][] = [
      ['september.ofx', 'application/x-ofx', ofx, /OFX 1 \(SGML\), known by the header line/, 'Checking …6789', 3],
      ['september.xml', 'application/xml', camt, /ISO 20022 camt\.053\.001\.08/, 'Checking …3000', 1],
    ];
    for (const [name, mimeType, buffer, format, account, rows] of cases) {
      await page.getByRole('button', { name: 'Statement' }).click();
      if (name.endsWith('.ofx')) await screenshot(page, 'upload-any-format');
      await page.locator('.upload input[type=file]').setInputFiles({ name, mimeType, buffer });
      const preview = page.locator('.preview');
      await expect.poll(() => preview.locator('h3.subhead').innerText(), { timeout: 20_000 }).toMatch(new RegExp(`^${rows} rows? to add from`));
      expect(await preview.locator('.preview-layout').innerText(), name).toMatch(format);
      await expect.poll(() => preview.locator('.preview-kind').innerText()).toContain(`${account}: a new checking account`);
      await screenshot(page, `statement-preview-${name.endsWith('.ofx') ? 'ofx' : 'camt'}`);
      await preview.getByRole('button', { name: new RegExp(`^Import ${rows} rows?$`) }).click();
      await waitSettled(page);
      const slip = page.locator('.slip').last();
      await slip.getByRole('button', { name: 'Allow', exact: true }).click();
      await waitSettled(page);
      await expect.poll(() => slip.locator('.slip-verdict').innerText()).toMatch(/^Allowed/);
    }
    const owner = (await visitorId(page))!;
    // Each account holds its bank's closing balance: what the statement said, with the opening
    // balance that makes it so; the pending camt entry is not in the ledger.
    const held = await sql<{ name: string; held: string }>(
      `SELECT a.name, sum(p.amount_minor)::text AS held FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
        WHERE p.owner_id = $1 AND a.name IN ('Checking …6789', 'Checking …3000') GROUP BY a.name ORDER BY a.name`,
      [owner],
    );
    expect(held).toEqual([
      { name: 'Checking …3000', held: '8000' },
      { name: 'Checking …6789', held: '124100' },
    ]);
    // The same OFX again adds nothing.
    await page.getByRole('button', { name: 'Statement' }).click();
    await page.locator('.upload input[type=file]').setInputFiles({ name: 'september-again.ofx', mimeType: 'application/x-ofx', buffer: ofx });
    const again = page.locator('.preview');
    await expect.poll(() => again.locator('h3.subhead').innerText(), { timeout: 20_000 }).toMatch(/^Nothing new from september\.ofx/);
    await again.getByRole('button', { name: 'Done' }).click();
    // The bank's next file corrects two of September's rows: the second coffee never happened
    // (A2 deleted) and the refund was 240.00 (A4 replaces A3).
    const corrections = Buffer.from(
      'OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nCHARSET:1252\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD\n' +
        '<BANKACCTFROM><BANKID>021000021<ACCTID>000123456789<ACCTTYPE>CHECKING</BANKACCTFROM>\n<BANKTRANLIST>\n' +
        '<STMTTRN><TRNTYPE>POS<DTPOSTED>20250905<TRNAMT>-4.50<FITID>A5<CORRECTFITID>A2<CORRECTACTION>DELETE<NAME>OFX COFFEE</STMTTRN>\n' +
        '<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20250906<TRNAMT>240.00<FITID>A4<CORRECTFITID>A3<CORRECTACTION>REPLACE<NAME>OFX REFUND</STMTTRN>\n' +
        '</BANKTRANLIST><LEDGERBAL><BALAMT>1235.50<DTASOF>20251001</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n',
    );
    // The upload stays open after "Done".
    await page.locator('.upload input[type=file]').setInputFiles({ name: 'october.ofx', mimeType: 'application/x-ofx', buffer: corrections });
    const corrected = page.locator('.preview');
    await expect.poll(() => corrected.locator('h3.subhead').innerText(), { timeout: 20_000 }).toMatch(/^1 row to add from october\.ofx/);
    const said = await corrected.locator('.preview-corrections li').allInnerTexts();
    expect(said).toEqual([
      'line 9 deletes the row the bank gave as A2: 2025-09-05 “OFX COFFEE” -$4.50',
      'line 10 replaces the row the bank gave as A3: 2025-09-06 “OFX REFUND” $250.00',
    ]);
    await screenshot(page, 'statement-preview-ofx-corrections');
    await corrected.getByRole('button', { name: 'Import 1 row' }).click();
    await waitSettled(page);
    const approve = page.locator('.slip').last();
    await approve.getByRole('button', { name: 'Allow', exact: true }).click();
    await waitSettled(page);
    await expect.poll(() => approve.locator('.slip-verdict').innerText()).toMatch(/^Allowed/);
    const after = await sql<{ held: string }>(
      `SELECT sum(p.amount_minor)::text AS held FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
        WHERE p.owner_id = $1 AND a.name = 'Checking …6789'`,
      [owner],
    );
    expect(after).toEqual([{ held: '123550' }]);

    // A QBO of a bank account and a card: the page offers each statement; the card is read alone.
    const both = Buffer.from(
      'OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nCHARSET:1252\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD\n' +
        '<BANKACCTFROM><BANKID>021000021<ACCTID>000555501234<ACCTTYPE>CHECKING</BANKACCTFROM>\n<BANKTRANLIST>\n' +
        '<STMTTRN><TRNTYPE>POS<DTPOSTED>20251003<TRNAMT>-7.00<FITID>B1<NAME>QBO LUNCH</STMTTRN>\n' +
        '</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1>\n' +
        '<CREDITCARDMSGSRSV1><CCSTMTTRNRS><CCSTMTRS><CURDEF>USD<CCACCTFROM><ACCTID>4111000011112222</CCACCTFROM>\n<BANKTRANLIST>\n' +
        '<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20251004<TRNAMT>-25.00<FITID>C1<NAME>QBO BOOKS</STMTTRN>\n' +
        '<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20251005<TRNAMT>-12.00<FITID>C2<NAME>QBO CINEMA</STMTTRN>\n' +
        '</BANKTRANLIST></CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1></OFX>\n',
    );
    await page.getByRole('button', { name: 'Statement', exact: true }).click();
    await page.locator('.upload input[type=file]').setInputFiles({ name: 'october.qbo', mimeType: 'application/x-ofx', buffer: both });
    const choice = page.locator('.statement-choice');
    await expect.poll(() => choice.locator('li').count(), { timeout: 20_000 }).toBe(2);
    expect(await choice.locator('li').allInnerTexts()).toEqual([
      'Read statement 1 checking account …1234 (USD, 1 transaction)',
      'Read statement 2 credit card …2222 (USD, 2 transactions)',
    ]);
    await screenshot(page, 'statement-choice');
    await choice.getByRole('button', { name: 'Read statement 2' }).click();
    const card = page.locator('.preview');
    await expect.poll(() => card.locator('h3.subhead').innerText(), { timeout: 20_000 }).toMatch(/^2 rows to add from october\.qbo/);
    await expect.poll(() => card.locator('.preview-kind').innerText()).toContain('Credit Card …2222: a new card account');
    await context.close();
  });

  it('takes in a row the balance column refuses, at the figure the person chooses; on a phone too', async () => {
    // Line 4 states −21.00 where the balance fell by 12.00; the rest agree.
    const statement = Buffer.from(
      'Date,Description,Amount,Balance\n' +
        '2025-08-01,FIGURE SALARY,100.00,1100.00\n' +
        '2025-08-02,FIGURE CAFE,-5.00,1095.00\n' +
        '2025-08-03,FIGURE GROCER,-21.00,1083.00\n' +
        '2025-08-04,FIGURE RENT,-50.00,1033.00\n',
    );
    for (const viewport of [DESKTOP, MOBILE]) {
      const { context, page } = await visitor(browser, viewport);
      await page.goto('/chat');
      await page.getByRole('button', { name: 'Statement' }).click();
      await page.locator('.upload input[type=file]').setInputFiles({ name: 'august.csv', mimeType: 'text/csv', buffer: statement });
      const preview = page.locator('.preview');
      await expect.poll(() => preview.locator('h3.subhead').innerText(), { timeout: 20_000 }).toMatch(/^3 rows to add from/);
      // Both figures, and a choice between them; nothing is taken until the person picks.
      const refused = preview.locator('.preview-errors li').filter({ hasText: /line 4/i });
      expect(await refused.innerText()).toMatch(/the balance moved by −12\.00 but the amount is −21\.00/);
      const choice = refused.getByRole('group', { name: /Line 4 reads fine; only the bank's balance disagrees/ });
      await expect.poll(() => choice.getByRole('button').allInnerTexts()).toEqual(["Take -₹21.00, the amount it states", "Take -₹12.00, the balance's change"]);
      if (viewport === MOBILE) {
        const height = await choice.getByRole('button').first().evaluate((b) => b.getBoundingClientRect().height);
        expect(height, 'a target a thumb can hit').toBeGreaterThanOrEqual(44);
      }
      await choice.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await screenshot(page, viewport === MOBILE ? 'phone-figure-choice' : 'figure-choice');
      await choice.getByRole('button', { name: /balance's change/ }).click();
      await expect.poll(() => preview.locator('h3.subhead').innerText(), { timeout: 20_000 }).toMatch(/^4 rows to add from/);
      // The preview comes back in view, its heading focused, saying what was taken and how.
      await expect.poll(() => page.evaluate(() => document.activeElement?.classList.contains('subhead') ?? false)).toBe(true);
      const taken = preview.locator('.preview-taken');
      expect(await taken.innerText()).toMatch(/line 4\s+at -₹12\.00, the balance's change \(the row states -₹21\.00\)/i);
      expect(await preview.locator('.preview-figures').innerText()).toMatch(/one that does not is taken in at the figure you chose/);
      expect(await preview.locator('.preview-errors').count()).toBe(0);
      expect(await overflow(page)).toBeFalsy();
      await axe(page).then((v) => expect(v.map((x) => x.id)).toEqual([]));
      await taken.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await screenshot(page, viewport === MOBILE ? 'phone-figure-taken' : 'figure-taken');
      if (viewport === MOBILE) {
        // Left out again, the row is refused again with its choice.
        await taken.getByRole('button', { name: 'Leave line 4 out' }).click();
        await expect.poll(() => preview.locator('h3.subhead').innerText(), { timeout: 20_000 }).toMatch(/^3 rows to add from/);
        expect(await preview.locator('.figure-choice').count()).toBe(1);
        await context.close();
        continue;
      }
      // The card names the row and its figure; the commit books exactly that figure.
      await preview.getByRole('button', { name: 'Import 4 rows' }).click();
      await waitSettled(page);
      const slip = page.locator('.slip');
      await expect.poll(() => slip.locator('.slip-summary').innerText()).toMatch(
        /taken in on your word though the balance column disagrees: line 4 at the balance's change -₹12\.00$/,
      );
      await slip.getByRole('button', { name: 'Allow', exact: true }).click();
      await waitSettled(page);
      await expect.poll(() => slip.locator('.slip-verdict').innerText()).toBe('Allowed. Done.');
      const owner = await visitorId(page);
      const booked = await sql<{ amount_minor: string }>(
        `SELECT p.amount_minor::text FROM transactions t JOIN postings p ON p.transaction_id = t.id AND p.owner_id = t.owner_id
         JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
         WHERE t.owner_id = $1 AND t.description = 'FIGURE GROCER' AND a.type = 'asset'`,
        [owner],
      );
      expect(booked).toEqual([{ amount_minor: '-1200' }]);
      await context.close();
    }
  });

  it('finds a waiting write again after a reload and on /chat, and its trace says it waits', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'Set a ₹20,000 monthly budget for Groceries.');
    await expect.poll(() => page.locator('.slip').getByRole('heading').innerText()).toBe('This will change your ledger');
    await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/);
    const conversation = new URL(page.url()).pathname;
    const owner = await visitorId(page);

    // A reload rebuilds the question and its card, and the focus is on the card's heading.
    await page.reload();
    const slip = page.locator('.slip');
    await expect.poll(() => slip.getByRole('heading').innerText(), { timeout: 15_000 }).toBe('This will change your ledger');
    await expect.poll(() => slip.locator('.slip-summary').innerText()).toMatch(/Groceries/);
    await expect.poll(() => page.locator('.exchange .question').first().innerText()).toContain('₹20,000 monthly budget');
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('.slip') !== null)).toBe(true);
    await expect.poll(() => page.getByRole('button', { name: 'Ask', exact: true }).isDisabled()).toBe(true);

    // Its run is waiting for the person, not "running".
    await page.goto('/runs');
    await expect.poll(() => page.locator('table').innerText(), { timeout: 15_000 }).toMatch(/waiting/);
    expect(await page.locator('table').innerText()).not.toMatch(/running/);

    // /chat reopens the conversation the visit is in, with the card; a decision there goes on.
    await page.goto('/chat');
    await page.waitForURL(`**${conversation}`);
    await slip.getByRole('button', { name: 'Allow', exact: true }).click();
    await waitSettled(page);
    await expect.poll(() => slip.locator('.slip-verdict').innerText()).toBe('Allowed. Done.');
    expect(await budget(owner!, 'Groceries')).toEqual([{ amount_minor: '2000000' }]);
    await page.reload();
    await expect.poll(() => page.locator('.exchange .answer').innerText(), { timeout: 15_000 }).toContain('₹20,000.00');
    expect(await page.locator('.slip[data-status="pending"]').count(), 'a decided card is not offered again').toBe(0);

    // A new conversation is the current one from then on.
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.waitForURL(/\/chat$/);
    await page.reload();
    await expect.poll(() => page.getByRole('heading', { name: 'Ask the ledger.' }).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(new URL(page.url()).pathname).toBe('/chat');
    expect((await axe(page)).map((v) => v.id)).toEqual([]);
    await context.close();
  });

  it('finds an expired confirmation says nothing was changed', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'Set a ₹20,000 monthly budget for Groceries.');
    const owner = await visitorId(page);
    // The confirmation's time runs out (its TTL shortened to now), then the person answers.
    await sql("UPDATE suspended_turns SET expires_at = now() - interval '1 second' WHERE owner_id = $1", [owner]);
    await page.locator('.slip').getByRole('button', { name: 'Allow', exact: true }).click();
    await waitSettled(page);
    await expect.poll(() => page.locator('.slip-verdict').innerText()).toMatch(/^Expired: nothing was changed/);
    expect(await budget(owner!, 'Groceries')).toEqual([]);
    await context.close();
  });

  it('sees how many messages are left, then the sentence for the visitor quota', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    for (let i = 1; i <= 8; i++) {
      await ask(page, `Hello number ${i}`);
      if (i === 7) await expect.poll(() => page.locator('.composer-foot').innerText()).toContain('1 of 8 messages left today.');
    }
    await page.getByLabel('Ask about your ledger').fill('One more?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await expect.poll(() => page.locator('.banner').innerText()).toContain('You have reached today’s message limit for this session.');
    const owner = await visitorId(page);
    const counted = await sql<{ count: number }>('SELECT count FROM owner_daily_messages WHERE owner_id = $1', [owner]);
    expect(counted).toEqual([{ count: 8 }]);
    await context.close();
  });
});

/** The link of the newest mail to `to` for `purpose`, as the person would click it. */
function mailedLink(to: string, purpose: 'verify' | 'reset'): string {
  const mails = readdirSync(OUTBOX)
    .sort()
    .map((name) => JSON.parse(readFileSync(resolve(OUTBOX, name), 'utf8')) as { to: string; purpose: string; link: string });
  const mail = mails.reverse().find((m) => m.to === to && m.purpose === purpose);
  if (!mail) throw new Error(`no ${purpose} mail to ${to} in ${OUTBOX}`);
  return mail.link;
}

describe('the register', () => {
  async function categoryOf(id: string): Promise<string[]> {
    const rows = await sql<{ name: string }>(
      `SELECT a.name FROM postings p JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
       WHERE p.transaction_id = $1 AND a.type IN ('expense', 'income') ORDER BY a.name`,
      [id],
    );
    return rows.map((r) => r.name);
  }

  it('searches, changes a category and puts it back, splits, deletes and restores a row', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'How much did I spend?');
    const owner = await visitorId(page);
    await page.getByRole('link', { name: 'register' }).click();
    const rows = page.locator('#rows');
    await expect.poll(() => page.locator('#rows-title').innerText(), { timeout: 15_000 }).toBe('Rows 1–50 of 352');

    // A search lives in the address: category Groceries, largest first.
    await page.getByLabel('Category', { exact: true }).selectOption('Groceries');
    await page.getByLabel('Sort by').selectOption('amount:down');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/category=Groceries/);
    await expect.poll(async () => (await rows.locator('tbody tr td:nth-child(4)').allInnerTexts()).every((c) => c === 'Groceries')).toBe(true);
    const first = rows.locator('tbody tr').first();
    const id = (await first.getAttribute('data-id'))!;
    expect(await categoryOf(id)).toEqual(['Groceries']);

    // A new category: no card, done at once, said in view, and put back from the same sentence.
    await first.getByRole('button', { name: /^Change / }).click();
    const editor = page.locator('.row-editor');
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('.row-editor') !== null)).toBe(true);
    await editor.getByLabel('Category').selectOption('Dining');
    await editor.getByRole('button', { name: 'Save', exact: true }).click();
    const status = page.locator('.register-status');
    await expect.poll(() => status.innerText()).toMatch(/Groceries → Dining/);
    await expect.poll(() => page.evaluate(() => document.activeElement?.classList.contains('register-status'))).toBe(true);
    expect(await categoryOf(id)).toEqual(['Dining']);
    await status.getByRole('button', { name: 'Put it back' }).click();
    await expect.poll(() => status.innerText()).toMatch(/^done Put back:/i);
    expect(await categoryOf(id)).toEqual(['Groceries']);

    // A split whose shares add up; the page says what is left to place as the person types.
    const row = rows.locator(`tr[data-id="${id}"]`);
    await row.getByRole('button', { name: /^Change / }).click();
    await editor.getByRole('button', { name: 'Split across categories…' }).click();
    const amount = (await row.locator('td.n').innerText()).split('\n')[0]!.replace(/[^\d.]/g, '');
    const whole = Number(amount.split('.')[0]);
    await editor.getByLabel('Share 1 amount (INR)').fill(String(whole - 1) + (amount.includes('.') ? `.${amount.split('.')[1]}` : ''));
    await editor.getByLabel('Share 2 category').selectOption('Shopping');
    await editor.getByLabel('Share 2 amount (INR)').fill('0.5');
    await expect.poll(() => editor.locator('.split p').innerText()).toMatch(/still to place/);
    await editor.getByLabel('Share 2 amount (INR)').fill('1');
    await expect.poll(() => editor.locator('.split p').innerText()).toBe('Every bit is placed.');
    await axe(page).then((v) => expect(v.map((x) => x.id)).toEqual([]));
    await editor.getByRole('button', { name: 'Save the split' }).click();
    await expect.poll(() => status.innerText()).toMatch(/split: Groceries ₹.*, Shopping ₹1\.00/);
    expect(await categoryOf(id)).toEqual(['Groceries', 'Shopping']);

    // A deletion, then put back from the edits list.
    await row.getByRole('button', { name: /^Change / }).click();
    await editor.getByRole('button', { name: 'Delete this row…' }).click();
    await editor.getByRole('button', { name: 'Delete it' }).click();
    await expect.poll(() => status.innerText()).toMatch(/^done Deleted/i);
    expect(await sql('SELECT 1 FROM transactions WHERE id = $1', [id])).toHaveLength(0);
    const edits = page.locator('#edits');
    await edits.getByRole('button', { name: /^Put back: Deleted/ }).click();
    await expect.poll(() => status.innerText()).toMatch(/^done Put back: Deleted/i);
    expect(await categoryOf(id)).toEqual(['Groceries', 'Shopping']);
    const recorded = await sql<{ kind: string }>('SELECT kind FROM ledger_edits WHERE owner_id = $1 ORDER BY made_at', [owner]);
    expect(recorded.map((r) => r.kind)).toEqual(['recategorize', 'revert', 'split', 'delete', 'revert']);
    await context.close();
  });

  it('reads the first page of a 10,000-transaction ledger, measured', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'How much did I spend?');
    const owner = await visitorId(page);
    // 10,000 rows in all: the demo's 352 and balanced rows of its own spending accounts.
    await sql(
      `WITH acc AS (
         SELECT (SELECT id FROM accounts WHERE owner_id = $1 AND name = 'Checking') AS checking,
                (SELECT id FROM accounts WHERE owner_id = $1 AND name = 'Groceries') AS groceries
       ), t AS (
         INSERT INTO transactions (owner_id, date, description, raw_description)
         SELECT $1, date '2024-01-01' + (n % 700), 'BULK SHOP ' || n, 'BULK SHOP ' || n FROM generate_series(1, 9648) n
         RETURNING id
       )
       INSERT INTO postings (owner_id, transaction_id, account_id, amount_minor, currency)
       SELECT $1, t.id, x.account, x.amount, 'INR' FROM t, acc,
              LATERAL (VALUES (acc.checking, -12345::bigint), (acc.groceries, 12345::bigint)) AS x(account, amount)`,
      [owner],
    );
    const timings: number[] = [];
    for (let i = 0; i < 5; i++) {
      await page.goto('/transactions');
      await expect.poll(() => page.locator('#rows-title').innerText(), { timeout: 15_000 }).toBe('Rows 1–50 of 10000');
      const ms = await page.evaluate(() => {
        const marks = performance.getEntriesByName('kakeibo:register-page') as PerformanceMark[];
        return (marks[marks.length - 1]?.detail as { ms: number } | undefined)?.ms ?? null;
      });
      expect(ms, 'the page was measured').not.toBeNull();
      timings.push(Math.round(ms ?? 0));
    }
    timings.sort((a, b) => a - b);
    const median = timings[Math.floor(timings.length / 2)];
    const dir = resolve(artifacts(), 'web-e2e');
    mkdirSync(dir, { recursive: true });
    writeFileSync(resolve(dir, 'register-metrics.json'), JSON.stringify({ rows: 10000, firstPageMs: timings, medianMs: median }, null, 2));
    console.log(`/transactions: the first page of a 10,000-transaction ledger on screen ${median} ms (median of 5: ${timings.join(', ')}) after its request`);
    await context.close();
  });
});

describe('categories, rules and budgets', () => {
  const inCategory = async (owner: string | null, category: string, pattern: string) =>
    Number(
      (
        await sql<{ n: string }>(
          `SELECT count(DISTINCT t.id)::text AS n FROM transactions t
             JOIN postings p ON p.transaction_id = t.id AND p.owner_id = t.owner_id
             JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
           WHERE t.owner_id = $1 AND a.name = $2 AND strpos(lower(t.description), lower($3)) > 0`,
          [owner, category, pattern],
        )
      )[0]?.n ?? '0',
    );

  it('drafts a rule from a register row, files the past rows like it, merges a category and puts both back', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'How much did I spend?');
    const owner = await visitorId(page);
    await page.goto('/transactions?category=Dining');
    await expect.poll(() => page.locator('#rows-title').innerText(), { timeout: 15_000 }).toMatch(/^Rows 1–/);
    await page.locator('#rows tbody tr').first().getByRole('button', { name: /^Change / }).click();
    await page.locator('.row-editor').getByRole('link', { name: 'All like this…' }).click();
    await page.waitForURL(/\/categories\?pattern=.*category=Dining/);

    // Drafted and previewed at once: its rows are Dining's already, and nothing changed.
    const form = page.locator('#rule-form');
    const pattern = await form.getByLabel('When the description holds').inputValue();
    expect(pattern.length).toBeGreaterThan(1);
    const like = form.locator('.like-preview');
    await expect.poll(() => like.innerText(), { timeout: 15_000 }).toMatch(/already in Dining/);
    const dining = await inCategory(owner, 'Dining', pattern);
    expect(dining).toBeGreaterThan(0);

    // A category of one's own, then the past rows like the rule filed into it: previewed, then done.
    await page.getByLabel('New category').fill('Takeaway');
    await page.getByRole('button', { name: 'Add the category' }).click();
    const status = page.locator('.register-status').first();
    await expect.poll(() => status.innerText()).toMatch(/Added the category Takeaway/);
    await form.getByLabel('File it under').selectOption('Takeaway');
    await form.getByRole('button', { name: 'The past rows like it…' }).click();
    await expect.poll(() => like.innerText()).toMatch(new RegExp(`^${dining} past rows? holding`));
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('#rule-form') !== null)).toBe(true);
    await axe(page).then((v) => expect(v.map((x) => x.id)).toEqual([]));
    await screenshot(page, 'rule-preview');
    await like.getByRole('button', { name: `File ${dining} ${dining === 1 ? 'row' : 'rows'} under Takeaway` }).click();
    await expect.poll(() => status.innerText()).toMatch(/^done Filed/i);
    await expect.poll(() => page.evaluate(() => document.activeElement?.classList.contains('register-status'))).toBe(true);
    expect(await inCategory(owner, 'Takeaway', pattern)).toBe(dining);
    expect(await inCategory(owner, 'Dining', pattern)).toBe(0);

    // The rule kept for rows imported from now on.
    await form.getByLabel('When the description holds').fill(pattern);
    await form.getByLabel('File it under').selectOption('Takeaway');
    await form.getByRole('button', { name: 'Save the rule' }).click();
    await expect.poll(() => status.innerText()).toMatch(/Saved the rule/);
    await expect.poll(() => page.locator('#rules tbody').innerText()).toContain(pattern);

    // Takeaway merged into Dining: its rows and its rule go along, in one edit put back at once.
    const takeaway = page.locator('#categories tbody tr').filter({ hasText: 'Takeaway' });
    await takeaway.getByRole('button', { name: 'Change the category Takeaway' }).click();
    const editor = page.locator('#categories .row-editor');
    await editor.getByLabel('Merge into').selectOption({ label: 'Dining' });
    await editor.getByRole('button', { name: 'Merge…' }).click();
    await editor.getByRole('button', { name: 'Merge into Dining' }).click();
    await expect.poll(() => status.innerText()).toMatch(new RegExp(`Merged Takeaway into Dining: ${dining} rows?, 1 rule`));
    expect(await sql("SELECT 1 FROM accounts WHERE owner_id = $1 AND name = 'Takeaway'", [owner])).toHaveLength(0);
    expect(await inCategory(owner, 'Dining', pattern)).toBe(dining);
    await status.getByRole('button', { name: 'Put it back' }).click();
    await expect.poll(() => status.innerText()).toMatch(/^done Put back: Merged/i);
    expect(await inCategory(owner, 'Takeaway', pattern)).toBe(dining);
    const rule = await sql<{ name: string }>('SELECT a.name FROM rules r JOIN accounts a ON a.id = r.account_id WHERE r.owner_id = $1', [owner]);
    expect(rule.map((r) => r.name)).toEqual(['Takeaway']);
    const recorded = await sql<{ kind: string }>('SELECT kind FROM ledger_edits WHERE owner_id = $1 ORDER BY made_at', [owner]);
    expect(recorded.map((r) => r.kind)).toEqual(['apply_rule', 'merge', 'revert']);
    expect(await overflow(page)).toBeFalsy();
    await context.close();
  });

  it('sets a budget, says when it is over, and leads from spent to its rows; on a phone too', async () => {
    for (const viewport of [DESKTOP, MOBILE]) {
      const { context, page } = await visitor(browser, viewport);
      await page.goto('/chat');
      await ask(page, 'How much did I spend?');
      const owner = await visitorId(page);
      await page.goto('/budgets');
      await expect.poll(() => page.locator('h1').innerText(), { timeout: 15_000 }).toBe('Budgets · June 2025');
      const groceries = page.locator('#budgets tbody tr').filter({ hasText: /^Groceries/ }).first();
      await groceries.getByRole('button', { name: 'Set a budget for Groceries' }).click();
      await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.id ?? '')).toMatch(/-amount$/);
      await page.keyboard.type('100');
      await page.keyboard.press('Enter');
      const status = page.locator('.register-status');
      await expect.poll(() => status.innerText()).toMatch(/Groceries: ₹100\.00 for June 2025/);
      const line = page.locator('#budgets tbody tr').filter({ hasText: /^Groceries/ }).first();
      await expect.poll(() => line.innerText()).toMatch(/over by ₹/);
      const set = await sql<{ amount_minor: string; month: string }>('SELECT amount_minor::text, month FROM budgets WHERE owner_id = $1', [owner]);
      expect(set).toEqual([{ amount_minor: '10000', month: '2025-06' }]);
      expect(await overflow(page)).toBeFalsy();
      await axe(page).then((v) => expect(v.map((x) => x.id)).toEqual([]));
      if (viewport === MOBILE) await screenshot(page, 'phone-budgets');

      // Spent is the register's rows of the category in the month.
      const rows = Number((await line.locator('td').first().innerText()).match(/(\d+) rows?/)?.[1]);
      await line.getByRole('link', { name: /^Groceries: the rows of/ }).click();
      await page.waitForURL(/\/transactions\?category=Groceries&from=2025-06-01&to=2025-06-30/);
      await expect.poll(() => page.locator('#rows-title').innerText(), { timeout: 15_000 }).toMatch(new RegExp(`of ${rows}$|^Rows 1–${rows}$`));
      await context.close();
    }
  });
});

describe('on a phone (390×844)', () => {
  it('asks, decides, uploads, imports, keeps the register and reads the dashboard, through the menu', async () => {
    const { context, page } = await visitor(browser, MOBILE);
    await page.goto('/chat');
    // Ask, then decide a write: the card's buttons are finger-sized.
    await ask(page, 'Set a ₹20,000 monthly budget for Groceries.');
    const slip = page.locator('.slip');
    const allow = slip.getByRole('button', { name: 'Allow', exact: true });
    expect((await allow.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    await allow.click();
    await waitSettled(page);
    await expect.poll(() => slip.locator('.slip-verdict').innerText()).toBe('Allowed. Done.');

    // Upload and import the sample: the preview keeps its Amount column in view.
    await page.getByRole('button', { name: 'Statement' }).click();
    await page.getByRole('button', { name: 'Use the sample statement' }).click();
    const preview = page.locator('.preview');
    await expect.poll(() => preview.getByRole('heading').innerText(), { timeout: 20_000 }).toMatch(/^12 rows to add from/);
    const amountHead = preview.locator('.ledger-table th').filter({ hasText: /amount/i }).first();
    const box = (await amountHead.boundingBox())!;
    expect(box.x + box.width, 'the Amount column is on screen').toBeLessThanOrEqual(390);
    await preview.getByRole('button', { name: 'Import 12 rows' }).click();
    await waitSettled(page);
    await page.locator('.slip').last().getByRole('button', { name: 'Allow', exact: true }).click();
    await waitSettled(page);
    await expect.poll(() => page.locator('.slip-verdict').last().innerText()).toBe('Allowed. Done.');

    // The nav folds behind Menu; every link is a 44px target.
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.click();
    const register = page.getByRole('link', { name: 'register' });
    expect((await register.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    await register.click();
    await expect.poll(() => page.locator('#rows-title').innerText(), { timeout: 15_000 }).toBe('Rows 1–50 of 364');
    expect(await page.getByRole('link', { name: 'register' }).isVisible(), 'the menu folds on a new page').toBe(false);
    const first = page.locator('#rows tbody tr').first();
    const amount = (await first.locator('td.n').boundingBox())!;
    expect(amount.x + amount.width, 'the amount is on screen').toBeLessThanOrEqual(390);
    await first.getByRole('button', { name: /^Change / }).click();
    await page.locator('.row-editor').getByLabel('Category').selectOption('Dining');
    await page.locator('.row-editor').getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.locator('.register-status').innerText()).toMatch(/→ Dining/);
    expect(await overflow(page)).toBeFalsy();
    await screenshot(page, 'phone-register-after-edit');

    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'dashboard' }).click();
    await expect.poll(() => page.locator('h1').innerText(), { timeout: 15_000 }).toBe('July 2025');
    expect(await overflow(page)).toBeFalsy();
    await context.close();
  });
});

describe('pages for people', () => {
  it('the landing says it is a demo, leads with what a visitor can do, and shows no developer commands', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/');
    await expect.poll(() => page.locator('.demo-mark').textContent()).toBe('Demo · synthetic data · scripted answers');
    const doing = await page.locator('.can-do').innerText();
    for (const what of ['Ask the ledger', 'Bring a statement', 'Keep the register', 'See where it went']) expect(doing).toContain(what);
    await page.waitForLoadState('networkidle');
    const text = await page.locator('main').innerText();
    expect(text).not.toMatch(/cargo |xtask|no run recorded|GET \/api/);
    await page.getByRole('link', { name: 'Keep the register' }).click();
    await page.waitForURL('**/transactions');
    await context.close();
  });
});

describe('an account', () => {
  it('proves its address, forgets its password and sets a new one by mail', async () => {
    const { context, page } = await visitor(browser);
    const email = `forgetful-${Date.now()}@example.com`;
    await page.goto('/sign-up');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a password of some length');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL('**/chat');

    await page.goto('/privacy');
    await expect.poll(() => page.locator('main').innerText()).toMatch(/not confirmed/i);
    await page.goto(mailedLink(email, 'verify'));
    await expect.poll(() => page.getByRole('status').innerText()).toContain('Your address is confirmed.');
    expect(await sql('SELECT 1 FROM users WHERE email = $1 AND email_verified_at IS NOT NULL', [email])).toHaveLength(1);

    // Signed out, the password forgotten: the sign-in page offers a mailed link.
    await page.goto('/privacy');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto('/sign-in');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.waitForURL('**/forgot-password');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await expect.poll(() => page.getByRole('status').innerText()).toContain('a link is on its way');
    await screenshot(page, 'forgot-password');

    await page.goto(mailedLink(email, 'reset'));
    await page.getByLabel('New password').fill('password123');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('too easy to guess');
    await page.getByLabel('New password').fill('another phrase nobody guesses');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await expect.poll(() => page.getByRole('status').innerText()).toContain('every session of the account has ended');
    await screenshot(page, 'reset-password');

    await page.goto('/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('another phrase nobody guesses');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/chat');
    await context.close();
  });

  it('signs up and keeps the ledger built anonymously', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'Set a ₹20,000 monthly budget for Groceries.');
    await page.locator('.slip').getByRole('button', { name: 'Allow', exact: true }).click();
    await waitSettled(page);
    const anonymous = await visitorId(page);
    await page.goto('/sign-up');
    const email = `keeper-${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a password of some length');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL('**/chat');
    expect(await visitorId(page), 'the same visitor, now with an account').toBe(anonymous);
    const users = await sql<{ email: string; is_anonymous: boolean }>('SELECT email, is_anonymous FROM users WHERE id = $1', [anonymous]);
    expect(users).toEqual([{ email, is_anonymous: false }]);
    expect(await budget(anonymous!, 'Groceries')).toEqual([{ amount_minor: '2000000' }]);
    await page.goto('/dashboard?month=2025-06');
    await expect.poll(() => page.locator('#budgets table').innerText(), { timeout: 15_000 }).toContain('₹20,000.00');
    await context.close();
  });

  it('downloads their data as a zip of four files that hold their ledger', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'What did I spend on groceries in March 2025?');
    const owner = await visitorId(page);
    await page.goto('/privacy');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download my data' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^kakeibo-\d{4}-\d{2}-\d{2}\.zip$/);
    const path = await download.path();
    const files = unzipSync(new Uint8Array(readFileSync(path)));
    expect(Object.keys(files).sort()).toEqual(['kakeibo.beancount', 'kakeibo.csv', 'kakeibo.journal', 'kakeibo.json']);
    const text = (name: string) => strFromU8(files[name]!);
    const rows = await sql<{ count: string }>('SELECT count(*)::text AS count FROM transactions WHERE owner_id = $1', [owner]);
    const count = rows[0]?.count;
    expect(Number(count)).toBeGreaterThan(300);
    expect(text('kakeibo.journal').split('\n    ; kakeibo-id: ').length - 1).toBe(Number(count));
    expect(text('kakeibo.beancount').split('\n  kakeibo-id: ').length - 1).toBe(Number(count));
    expect(text('kakeibo.csv').startsWith('date,transaction_id,posting_id,')).toBe(true);
    const json = JSON.parse(text('kakeibo.json')) as { owner: string; transactions: unknown[]; conversations: { title: string | null }[] };
    expect(json.owner).toBe(owner);
    expect(json.transactions).toHaveLength(Number(count));
    expect(json.conversations.length).toBeGreaterThan(0);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'saved' }).innerText()).toMatch(/kakeibo-.*\.zip/);
    // Deleting says the data can be taken first.
    await page.getByRole('button', { name: 'Delete everything now' }).click();
    await expect.poll(() => page.locator('.delete-box').last().innerText()).toContain('download your data first');
    await screenshot(page, 'privacy-download');
    await context.close();
  });

  it('deletes everything in two steps and finds nothing left', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'What did I spend on groceries in March 2025?');
    const owner = await visitorId(page);
    expect((await sql('SELECT 1 FROM transactions WHERE owner_id = $1', [owner])).length).toBeGreaterThan(300);
    await page.goto('/privacy');
    await page.getByRole('button', { name: 'Delete everything now' }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect(await sql('SELECT 1 FROM users WHERE id = $1', [owner]), 'keeping it keeps it').toHaveLength(1);
    await page.getByRole('button', { name: 'Delete everything now' }).click();
    await page.getByRole('button', { name: 'Delete it all' }).click();
    await expect.poll(() => page.locator('.delete-box').innerText()).toMatch(/^DELETED/i);
    for (const table of ['users', 'transactions', 'conversations', 'trace_runs', 'uploads', 'budgets']) {
      const column = table === 'users' ? 'id' : 'owner_id';
      expect(await sql(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [owner]), table).toHaveLength(0);
    }
    await context.close();
  });
});

describe('isolation between visitors', () => {
  it('a second visitor cannot see the first one’s conversation, run or upload', async () => {
    const first = await visitor(browser);
    await first.page.goto('/chat');
    await ask(first.page, 'What did I spend on groceries in March 2025?');
    await first.page.waitForURL(/\/chat\/[0-9a-f-]{36}$/);
    const conversation = first.page.url().split('/').pop()!;
    const ownerA = await visitorId(first.page);
    const [run] = await sql<{ id: string }>('SELECT id::text FROM trace_runs WHERE owner_id = $1', [ownerA]);
    const upload = await first.page.evaluate(async () => {
      const r = await fetch('/api/uploads?filename=mine.csv', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'Date,Description,Amount\n2025-07-01,Coffee,-120.00\n' });
      return ((await r.json()) as { id: string }).id;
    });

    const second = await visitor(browser);
    await second.page.goto('/chat');
    await ask(second.page, 'Hello');
    await second.page.goto(`/runs/${run!.id}`);
    await expect.poll(() => second.page.locator('h1').innerText()).toBe('Nothing is kept here.');
    await second.page.goto(`/chat/${conversation}`);
    await expect.poll(() => second.page.locator('h1').innerText()).toBe('Nothing is kept here.');
    const seen = await second.page.evaluate(async (id) => {
      const preview = await fetch(`/api/uploads/${id}/preview`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const removed = await fetch(`/api/uploads/${id}`, { method: 'DELETE' });
      const list = (await (await fetch('/api/uploads')).json()) as { uploads: { id: string }[] };
      return { preview: preview.status, removed: removed.status, listed: list.uploads.some((u) => u.id === id) };
    }, upload);
    expect(seen).toEqual({ preview: 404, removed: 404, listed: false });
    await second.page.goto('/runs');
    await expect.poll(() => second.page.locator('table a').count()).toBe(1);
    expect(await second.page.locator(`a[href="/runs/${run!.id}"]`).count(), 'the first visitor’s run is not listed').toBe(0);
    expect(await sql('SELECT 1 FROM uploads WHERE id = $1', [upload]), 'the upload is still there').toHaveLength(1);
    await first.context.close();
    await second.context.close();
  });
});

describe('the operator', () => {
  it('finds /admin is the 404 page for a visitor', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    await ask(page, 'Hello');
    await page.goto('/admin');
    await expect.poll(() => page.locator('h1').innerText()).toBe('Nothing is kept here.');
    expect(await page.getByRole('link', { name: 'operator' }).count(), 'no operator link for a visitor').toBe(0);
    await context.close();
  });

  it('pauses live chat (a visitor sees the paused sentence), then starts an evaluation whose report appears', async () => {
    const operator = await visitor(browser);
    await signInAsOperator(operator.page);
    await expect.poll(() => operator.page.locator('h1').innerText()).toBe('Operator');
    await operator.page.getByRole('button', { name: 'pause', exact: true }).click();
    await expect.poll(() => operator.page.locator('.switch-bar').innerText()).toContain('paused');
    const flags = await sql<{ value: boolean }>("SELECT value FROM operator_flags WHERE key = 'live_chat_paused'");
    expect(flags).toEqual([{ value: true }]);

    const guest = await visitor(browser);
    await guest.page.goto('/chat');
    await guest.page.getByLabel('Ask about your ledger').fill('Hello');
    await guest.page.getByRole('button', { name: 'Ask', exact: true }).click();
    await expect.poll(() => guest.page.locator('.banner').innerText()).toContain('kakeibo’s live chat is paused by the operator.');

    await operator.page.getByRole('button', { name: 'unpause', exact: true }).click();
    await expect.poll(() => operator.page.locator('.switch-bar').innerText()).toContain('running');

    // Blocking one visitor stops that visitor only, with its own sentence; unblocking lets it back.
    const guestId = await visitorId(guest.page);
    await operator.page.reload();
    await operator.page.getByRole('button', { name: `Block ${guestId}` }).click();
    await expect.poll(async () => (await sql<{ blocked: boolean }>('SELECT blocked_at IS NOT NULL AS blocked FROM users WHERE id = $1', [guestId]))[0]?.blocked).toBe(true);
    await guest.page.getByLabel('Ask about your ledger').fill('Hello again');
    await guest.page.getByRole('button', { name: 'Ask', exact: true }).click();
    await expect.poll(() => guest.page.locator('.banner').innerText()).toContain('This session has been paused by the operator.');
    await operator.page.getByRole('button', { name: `Unblock ${guestId}` }).click();
    await expect.poll(async () => (await sql<{ blocked: boolean }>('SELECT blocked_at IS NOT NULL AS blocked FROM users WHERE id = $1', [guestId]))[0]?.blocked).toBe(false);
    await ask(guest.page, 'Hello once more');
    await expect.poll(() => guest.page.locator('.exchange .answer').last().innerText()).toContain('scripted demo model');

    // The operator reads that visitor's trace from the recent runs; the visitor's own route would not show it to anyone else.
    const [guestRun] = await sql<{ id: string }>('SELECT id::text FROM trace_runs WHERE owner_id = $1 ORDER BY started_at DESC LIMIT 1', [guestId]);
    await operator.page.goto(`/runs/${guestRun!.id}`);
    await expect.poll(() => operator.page.locator('.run-top').innerText()).toContain(guestRun!.id);
    await expect.poll(() => operator.page.locator('.timeline').innerText()).toContain('model call');
    await operator.page.goto('/admin');

    await operator.page.getByRole('button', { name: 'start an evaluation' }).click();
    await expect
      .poll(async () => (await sql('SELECT 1 FROM eval_reports')).length, { timeout: 300_000, interval: 2_000 })
      .toBeGreaterThan(0);
    await expect.poll(() => operator.page.locator('.eval-panel').innerText(), { timeout: 30_000 }).toMatch(/Latest report: \d+\/\d+ passed/);

    await guest.page.goto('/evals');
    await expect.poll(() => guest.page.locator('h1').innerText()).toMatch(/^Evals/);
    await expect.poll(() => guest.page.locator('main').innerText()).toContain('SCRIPTED');
    await guest.page.goto('/');
    await expect.poll(() => guest.page.locator('.items').innerText()).toMatch(/Golden tasks passed, last run/);
    await expect.poll(() => guest.page.locator('.items').innerText()).toContain('SCRIPTED');
    await operator.context.close();
    await guest.context.close();
  });
});

describe('the chat journey by keyboard alone', () => {
  it('asks, reaches the confirmation, allows it and reads the answer without a mouse', async () => {
    const { context, page } = await visitor(browser);
    await page.goto('/chat');
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.id === 'composer-input');
    }
    expect(reached, 'Tab reaches the composer').toBe(true);
    await page.keyboard.type('Set a ₹20,000 monthly budget for Groceries.');
    await page.keyboard.press('Enter');
    await waitSettled(page);
    // The waiting write takes the focus on its heading (never on Allow: Enter alone decides
    // nothing); Tab reaches Allow, past the arguments, on purpose, and shows its focus.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('This will change your ledger');
    let onAllow = false;
    for (let i = 0; i < 4 && !onAllow; i++) {
      await page.keyboard.press('Tab');
      onAllow = await page.evaluate(() => document.activeElement?.textContent === 'Allow');
    }
    expect(onAllow, 'Tab reaches Allow').toBe(true);
    const visible = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      return getComputedStyle(el).outlineStyle !== 'none' && getComputedStyle(el).outlineWidth !== '0px';
    });
    expect(visible, 'the focused button shows its focus').toBe(true);
    await page.keyboard.press('Enter');
    await waitSettled(page);
    await expect.poll(() => page.locator('.slip-verdict').innerText()).toBe('Allowed. Done.');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('composer-input');
    const owner = await visitorId(page);
    expect(await budget(owner!, 'Groceries')).toEqual([{ amount_minor: '2000000' }]);
    await context.close();
  });

  it('brings the sample statement, previews and imports it without a mouse, each step in view', async () => {
    const { context, page } = await visitor(browser, MOBILE);
    await page.goto('/chat');
    const tabTo = async (text: string, most = 60) => {
      for (let i = 0; i < most; i++) {
        if (await page.evaluate((t) => document.activeElement?.textContent?.trim() === t, text)) return true;
        await page.keyboard.press('Tab');
      }
      return false;
    };
    const focusedInView = () =>
      page.evaluate(() => {
        const r = (document.activeElement as HTMLElement).getBoundingClientRect();
        return r.top >= 56 && r.bottom <= window.innerHeight ? true : `${r.top}..${r.bottom} of ${window.innerHeight}, ${window.scrollY}`;
      });
    expect(await tabTo('Statement'), 'Tab reaches Statement').toBe(true);
    await page.keyboard.press('Enter');
    // The panel opens with the focus on its heading, in view.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('upload-title');
    expect(await tabTo('Use the sample statement')).toBe(true);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('.preview') !== null && document.activeElement?.tagName === 'H3'), { timeout: 20_000 }).toBe(true);
    await expect.poll(focusedInView).toBe(true);
    expect(await tabTo('Import 12 rows', 120), 'Tab reaches Import').toBe(true);
    await page.keyboard.press('Enter');
    await waitSettled(page);
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('This will change your ledger');
    await expect.poll(focusedInView).toBe(true);
    expect(await tabTo('Allow', 6)).toBe(true);
    await page.keyboard.press('Enter');
    await waitSettled(page);
    await expect.poll(() => page.locator('.slip-verdict').innerText()).toBe('Allowed. Done.');
    // The answer after the decision ends above the composer.
    const answerBottom = await page.locator('.exchange .answer').last().evaluate((el) => el.getBoundingClientRect().bottom);
    const composerTop = await page.locator('.composer').evaluate((el) => el.getBoundingClientRect().top);
    expect(answerBottom).toBeLessThanOrEqual(composerTop + 1);
    const owner = await visitorId(page);
    expect(await sql("SELECT 1 FROM transactions WHERE owner_id = $1 AND date >= '2025-07-01'", [owner])).toHaveLength(12);
    await context.close();
  });
});

// Every route in both grounds, at desktop and phone sizes: a screenshot to look at, an axe-core
// pass (no serious or critical finding), and nothing wider than the screen.
describe('every route', () => {
  const views = [
    { name: 'desktop', viewport: DESKTOP },
    { name: 'mobile', viewport: MOBILE },
  ];

  async function routes(page: Page): Promise<{ name: string; path: string; prepare?: () => Promise<void> }[]> {
    const [run] = await sql<{ id: string }>('SELECT id::text FROM trace_runs WHERE owner_id = (SELECT id FROM users WHERE email = $1) ORDER BY started_at DESC LIMIT 1', [OPERATOR.email]);
    if (!run) throw new Error('the operator has no run to photograph');
    return [
      { name: 'landing', path: '/' },
      { name: 'chat-opening', path: '/chat?new' },
      {
        name: 'chat-slip',
        path: '/chat?new',
        prepare: async () => {
          await ask(page, 'Set budgets for Dining and Transport for June 2025.');
          await page.locator('.slip').scrollIntoViewIfNeeded();
        },
      },
      {
        name: 'chat-answer',
        path: '/chat?new',
        prepare: async () => {
          await ask(page, 'What did I spend on groceries in March 2025?');
          await page.getByRole('button', { name: 'Statement' }).click();
          await page.getByRole('button', { name: 'Use the sample statement' }).click();
          await page.locator('.preview').waitFor();
        },
      },
      { name: 'dashboard', path: '/dashboard?month=2025-04' },
      {
        name: 'register',
        path: '/transactions',
        prepare: async () => {
          await page.locator('#rows tbody tr').first().getByRole('button', { name: /^Change / }).click();
          await page.locator('.row-editor').getByRole('button', { name: 'Split across categories…' }).click();
        },
      },
      {
        name: 'categories',
        path: '/categories?pattern=TOIT%20BREWPUB&category=Dining',
        prepare: async () => {
          await page.locator('.like-preview').waitFor();
          await page.locator('#rule-form').getByLabel('File it under').selectOption('Entertainment');
          await page.locator('#rule-form').getByRole('button', { name: 'The past rows like it…' }).click();
          await page.locator('.like-preview button').waitFor();
        },
      },
      {
        name: 'budgets',
        path: '/budgets?month=2025-06',
        prepare: async () => {
          await page.getByRole('button', { name: 'Set a budget for Dining' }).click();
        },
      },
      { name: 'evals', path: '/evals' },
      { name: 'runs', path: '/runs' },
      { name: 'run', path: `/runs/${run.id}` },
      { name: 'admin', path: '/admin' },
      { name: 'privacy', path: '/privacy' },
      { name: 'sign-in', path: '/sign-in' },
      { name: 'sign-up', path: '/sign-up' },
      { name: 'terms', path: '/terms' },
      { name: 'not-found', path: '/no/such/page' },
    ];
  }

  for (const view of views) {
    it(`passes axe, fits the screen and is photographed at ${view.name} size`, async () => {
      const { context, page } = await visitor(browser, view.viewport);
      await signInAsOperator(page);
      await page.goto('/chat');
      await ask(page, 'What did I spend on groceries in March 2025?');
      const findings: string[] = [];
      for (const route of await routes(page)) {
        await page.goto(route.path);
        await page.waitForLoadState('networkidle');
        // Every page settles: nothing still "Reading…" when it is photographed and checked.
        await page.waitForFunction(() => !document.querySelector('[role="status"] .pulse'), undefined, { timeout: 15_000 });
        if (route.prepare) await route.prepare();
        await page.waitForTimeout(150);
        await screenshot(page, `${route.name}-${view.name}`);
        for (const v of await axe(page)) {
          findings.push(`${route.name}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`);
        }
        const wide = await overflow(page);
        if (wide) findings.push(`${route.name}: ${wide}`);
      }
      expect(findings).toEqual([]);
      await context.close();
    });
  }
});

/** Cloudflare's Turnstile script, played by a stand-in: each widget is a button that issues a
 * fresh `pass-…` token (or `window.__token` when a test sets one). */
const TURNSTILE_STAND_IN = `window.turnstile = {
  n: 0,
  render(el, options) {
    const id = 'widget-' + ++this.n;
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'I am a person';
    button.dataset.widget = id;
    button.addEventListener('click', () => options.callback(window.__token ?? 'pass-' + id + '-' + Math.random().toString(36).slice(2)));
    el.appendChild(button);
    return id;
  },
  remove(id) { document.querySelector('[data-widget="' + id + '"]')?.remove(); },
};`;

describe('the bot check, on a site that turns it on', () => {
  it('asks a new visitor once, refuses a forged token in words, and is gone once passed', async () => {
    // siteverify's stand-in: `pass-…` tokens pass once, anything else is refused.
    const used = new Set<string>();
    const verifier = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += String(chunk)));
      req.on('end', () => {
        const { secret, response } = JSON.parse(body || '{}') as { secret?: string; response?: string };
        const passed = secret === 'e2e-secret' && typeof response === 'string' && response.startsWith('pass-') && !used.has(response);
        if (passed) used.add(response);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(passed ? { success: true, 'error-codes': [] } : { success: false, 'error-codes': ['invalid-input-response'] }));
      });
    });
    await new Promise<void>((ok) => verifier.listen(0, '127.0.0.1', ok));
    const port = (verifier.address() as AddressInfo).port;
    const dev = await startDev({
      TURNSTILE_SECRET: 'e2e-secret',
      TURNSTILE_SITE_KEY: 'e2e-site-key',
      TURNSTILE_VERIFY_URL: `http://127.0.0.1:${port}/siteverify`,
    });
    try {
      const context = await browser.newContext({ baseURL: dev.base, viewport: DESKTOP, reducedMotion: 'reduce' });
      await context.route('https://challenges.cloudflare.com/**', (route) => route.fulfill({ contentType: 'text/javascript', body: TURNSTILE_STAND_IN }));
      const page = await context.newPage();
      watch(page);
      await page.goto('/chat');
      const input = page.getByLabel('Ask about your ledger');
      const askButton = page.getByRole('button', { name: 'Ask', exact: true });
      const person = page.getByRole('button', { name: 'I am a person' });
      await input.fill('How much did I spend?');
      await expect.poll(() => person.count()).toBe(1);
      expect(await askButton.isDisabled(), 'no token yet, no message').toBe(true);

      // A forged token: refused in words, the question back in the composer, no visitor made.
      await page.evaluate(() => {
        (window as unknown as { __token?: string }).__token = 'forged';
      });
      await person.click();
      await askButton.click();
      await expect.poll(() => page.locator('.banner').innerText()).toContain('Verification failed. Reload the page and try again.');
      expect(await input.inputValue()).toBe('How much did I spend?');
      expect(await visitorId(page)).toBeNull();
      expect(await askButton.isDisabled(), 'the forged token is spent').toBe(true);

      // A token the check accepts: answered, the visitor remembered, the widget gone.
      await page.evaluate(() => {
        delete (window as unknown as { __token?: string }).__token;
      });
      await person.click();
      await askButton.click();
      await waitSettled(page);
      await expect.poll(() => page.locator('.exchange .answer').first().innerText()).toContain('June 2025');
      await expect.poll(() => person.count()).toBe(0);
      const owner = await visitorId(page);
      expect(await sql('SELECT 1 FROM users WHERE id = $1 AND human_checked_at IS NOT NULL', [owner])).toHaveLength(1);

      // Asked once: the next question goes without a token.
      await ask(page, 'Anything unusual in April 2025?');
      await expect.poll(() => page.locator('.exchange .answer').nth(1).innerText()).toContain('DMART');
      expect(used.size).toBe(1);
      await screenshot(page, 'chat-after-bot-check');
      await context.close();

      // A visitor whose first act is an upload passes the check with it: no visit without it.
      const uploader = await browser.newContext({ baseURL: dev.base, viewport: DESKTOP, reducedMotion: 'reduce' });
      await uploader.route('https://challenges.cloudflare.com/**', (route) => route.fulfill({ contentType: 'text/javascript', body: TURNSTILE_STAND_IN }));
      const second = await uploader.newPage();
      watch(second);
      await second.goto('/chat');
      await second.getByRole('button', { name: 'Statement' }).click();
      await second.getByRole('button', { name: 'Use the sample statement' }).click();
      await expect.poll(() => second.getByRole('alert').first().innerText()).toContain('that you are a person');
      expect(await visitorId(second), 'no visit before the check').toBeNull();
      await second.getByRole('button', { name: 'I am a person' }).click();
      await second.getByRole('button', { name: 'Use the sample statement' }).click();
      await expect.poll(() => second.locator('.preview').getByRole('heading').innerText(), { timeout: 20_000 }).toMatch(/^12 rows to add from/);
      const uploaderId = await visitorId(second);
      expect(await sql('SELECT 1 FROM users WHERE id = $1 AND human_checked_at IS NOT NULL', [uploaderId])).toHaveLength(1);
      expect(used.size).toBe(2);
      await uploader.close();
    } finally {
      await dev.stop();
      verifier.close();
    }
  });
});

/** An RS256 JWT signed with the suite's stand-in issuer key. */
function signedIdToken(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${part({ alg: 'RS256', typ: 'JWT', kid: 'stand-in-1' })}.${part(claims)}`;
  const key = readFileSync(resolve(REPO, 'crates', 'devserver', 'tests', 'fixtures', 'oidc', 'issuer.pem'), 'utf8');
  return `${body}.${createSign('RSA-SHA256').update(body).sign(key).toString('base64url')}`;
}

describe('Google sign-in, on a site that turns it on', () => {
  it('signs a visitor in through the identity provider and keeps what they asked; a cancel comes back in words', async () => {
    // The identity provider's stand-in: discovery, keys, a consent page that answers at once (or
    // says no when the test asks it to), and a token endpoint that checks the PKCE verifier.
    let issuer = '';
    let refuse = false;
    const codes = new Map<string, { challenge: string; nonce: string; redirect: string }>();
    const idp = createServer((req, res) => {
      const url = new URL(req.url ?? '/', issuer);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url.pathname === '/.well-known/openid-configuration') {
        send(200, { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` });
      } else if (url.pathname === '/jwks') {
        send(200, JSON.parse(readFileSync(resolve(REPO, 'crates', 'devserver', 'tests', 'fixtures', 'oidc', 'issuer.jwks.json'), 'utf8')));
      } else if (url.pathname === '/authorize') {
        const back = new URL(url.searchParams.get('redirect_uri') ?? '');
        back.searchParams.set('state', url.searchParams.get('state') ?? '');
        if (refuse) back.searchParams.set('error', 'access_denied');
        else {
          const code = `code-${codes.size + 1}`;
          codes.set(code, { challenge: url.searchParams.get('code_challenge') ?? '', nonce: url.searchParams.get('nonce') ?? '', redirect: back.origin + back.pathname });
          back.searchParams.set('code', code);
        }
        res.writeHead(302, { location: back.toString() });
        res.end();
      } else if (url.pathname === '/token') {
        let body = '';
        req.on('data', (chunk) => (body += String(chunk)));
        req.on('end', () => {
          const form = new URLSearchParams(body);
          const grant = codes.get(form.get('code') ?? '');
          codes.delete(form.get('code') ?? '');
          const verifier = createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url');
          if (!grant || verifier !== grant.challenge || form.get('redirect_uri') !== grant.redirect || form.get('client_secret') !== 'e2e-google-secret') {
            send(400, { error: 'invalid_grant' });
            return;
          }
          const now = Math.floor(Date.now() / 1000);
          const claims = { iss: issuer, aud: 'e2e.apps.example', sub: 'e2e-google-sub', email: 'e2e.person@gmail.example', email_verified: true, nonce: grant.nonce, iat: now, exp: now + 600 };
          send(200, { access_token: 'unused', token_type: 'Bearer', id_token: signedIdToken(claims) });
        });
      } else send(404, {});
    });
    await new Promise<void>((ok) => idp.listen(0, '127.0.0.1', ok));
    issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    const dev = await startDev({
      GOOGLE_CLIENT_ID: 'e2e.apps.example',
      GOOGLE_CLIENT_SECRET: 'e2e-google-secret',
      GOOGLE_ISSUER: issuer,
    });
    try {
      const context = await browser.newContext({ baseURL: dev.base, viewport: DESKTOP, reducedMotion: 'reduce' });
      const page = await context.newPage();
      watch(page);
      await page.goto('/chat');
      await ask(page, 'Anything unusual in April 2025?');
      const anonymous = await visitorId(page);

      // Saying no at Google: back on /sign-in, in words, still the same anonymous visitor.
      refuse = true;
      await page.goto('/sign-in');
      await page.getByRole('link', { name: 'Sign in with Google' }).click();
      await page.waitForURL('**/sign-in?error=google_cancelled');
      await expect.poll(() => page.getByRole('alert').innerText()).toContain('Google sign-in was cancelled; nothing changed.');
      expect(await visitorId(page)).toBe(anonymous);

      // Consenting: signed in, on /chat, the anonymous visit's conversation kept.
      refuse = false;
      await page.getByRole('link', { name: 'Sign in with Google' }).click();
      await page.waitForURL('**/chat');
      const session = await page.evaluate(async () => (await (await fetch('/api/session')).json()) as { visitor: { email: string; anonymous: boolean } });
      expect(session.visitor).toMatchObject({ email: 'e2e.person@gmail.example', anonymous: false });
      const owner = await visitorId(page);
      expect(await sql('SELECT 1 FROM users WHERE id = $1 AND google_sub = $2', [owner, 'e2e-google-sub'])).toHaveLength(1);
      expect(await sql('SELECT 1 FROM conversations WHERE owner_id = $1', [owner])).toHaveLength(1);
      await context.close();
    } finally {
      await dev.stop();
      idp.close();
    }
  });
});
