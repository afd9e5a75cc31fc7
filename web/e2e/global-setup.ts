// Starts the stack the journeys drive: an operator account, then kakeibo-dev on a free port over
// the e2e database, with the scripted demo model and quotas an end-to-end run can live with.
// Everything it needs comes from the environment `cargo xtask test` sets.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(here, '..', '..');
export const OPERATOR = { email: 'ops@example.com', password: 'a long operator password for the e2e run' };
/** Where the journeys' kakeibo-dev writes its mail (one JSON file a mail). */
export const OUTBOX = resolve(REPO, 'target', 'e2e-outbox');

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the journeys with cargo xtask test (it sets ${name})`);
  return value;
}

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => ok(port));
    });
  });
}

async function waitFor(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`kakeibo-dev exited (${child.exitCode}) before it answered:\n${log()}`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`kakeibo-dev did not answer ${url} within 60 s:\n${log()}`);
}

/** A running kakeibo-dev: its address, its log so far, and how to stop it. */
export interface Dev {
  base: string;
  log: () => string;
  stop: () => Promise<void>;
}

/** kakeibo-dev on a free port over the e2e database and the scripted demo model; `env` adds or
 * overrides settings (the bot check's journey starts one of its own with the check on). */
export async function startDev(env: Record<string, string> = {}): Promise<Dev> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let output = '';
  const server = spawn(need('KAKEIBO_DEV_BIN'), ['--addr', `127.0.0.1:${port}`, '--web-dist', resolve(REPO, 'web', 'dist')], {
    cwd: REPO,
    env: {
      ...process.env,
      DATABASE_URL: need('KAKEIBO_E2E_DATABASE_URL'),
      APP_DATABASE_URL: need('KAKEIBO_E2E_APP_DATABASE_URL'),
      KAKEIBO_PROVIDER: `script:${resolve(REPO, 'fixtures', 'scripts', 'demo.yaml')}`,
      ADMIN_EMAILS: OPERATOR.email,
      // Every browser context comes from 127.0.0.1: the per-address limits would stop the run.
      IP_DAILY_MESSAGE_QUOTA: '100000',
      ANON_DAILY_MESSAGE_QUOTA: '8',
      GLOBAL_DAILY_BUDGET_USD: '1000',
      RUST_LOG: process.env.RUST_LOG ?? 'warn',
      MAIL_OUTBOX: OUTBOX,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout?.on('data', (d) => (output += String(d)));
  server.stderr?.on('data', (d) => (output += String(d)));
  const stop = async () => {
    server.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    if (server.exitCode === null) server.kill('SIGKILL');
  };
  try {
    await waitFor(`${base}/api/session`, server, () => output);
  } catch (e) {
    await stop();
    throw e;
  }
  return { base, log: () => output, stop };
}

let server: Dev | undefined;

export default async function setup(project: TestProject) {
  const databaseUrl = need('KAKEIBO_E2E_DATABASE_URL');
  const cliBin = need('KAKEIBO_BIN');
  const added = spawnSync(cliBin, ['operator', 'add', OPERATOR.email], {
    input: `${OPERATOR.password}\n`,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  if (added.status !== 0) throw new Error(`kakeibo operator add failed: ${added.stderr}`);

  server = await startDev();

  const artifacts = resolve(process.env.KAKEIBO_WEB_ARTIFACTS ?? resolve(REPO, 'target'));
  mkdirSync(resolve(artifacts, 'web-screenshots'), { recursive: true });
  writeFileSync(resolve(artifacts, 'web-e2e-server.log'), '');
  project.provide('baseUrl', server.base);
  project.provide('databaseUrl', databaseUrl);
  project.provide('artifacts', artifacts);

  return async () => {
    writeFileSync(resolve(artifacts, 'web-e2e-server.log'), server?.log() ?? '');
    await server?.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    databaseUrl: string;
    artifacts: string;
  }
}
