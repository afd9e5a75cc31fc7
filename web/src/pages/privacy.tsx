// /privacy: what kakeibo keeps about a visitor, who can read it, how long it lasts, a download of
// all of it (GET /api/export, a zip) and a control that deletes all of it in two steps
// (DELETE /api/account).

import { useState } from 'preact/hooks';
import { ApiError, api } from '../api/client';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { Section } from '../components/paper';
import { Statements } from '../components/statements';
import { useSession } from '../session';
import { AccountSecurity } from './password';

export function Privacy() {
  const { session, refresh } = useSession();
  const visitor = session?.visitor;
  const [signingOut, setSigningOut] = useState(false);
  const [signOutFailed, setSignOutFailed] = useState<string | null>(null);
  return (
    <Page genre="paper" title="Privacy" narrow>
      <header class="page-head">
        <h1 class="headline">Privacy</h1>
        <p class="lead">
          kakeibo is a demonstration of a finance agent, not a financial service. This page says exactly what it keeps about
          you, who can read it, and how to delete it.
        </p>
        {visitor && !visitor.anonymous ? (
          <p class="small" style={{ marginTop: '16px' }}>
            Signed in as <strong>{visitor.email}</strong>.{' '}
            <button
              type="button"
              class="link-button"
              disabled={signingOut}
              onClick={async () => {
                setSigningOut(true);
                setSignOutFailed(null);
                try {
                  await api.signOut();
                } catch (e) {
                  setSignOutFailed(e instanceof Error ? e.message : String(e));
                } finally {
                  await refresh();
                  setSigningOut(false);
                }
              }}
            >
              {signingOut ? 'Signing out…' : 'Sign out'}
            </button>{' '}
            (every session of the account ends, on every device).
          </p>
        ) : null}
        {signOutFailed ? (
          <p class="small" role="alert">
            <Mark tone="danger">failed</Mark> Signing out did not go through ({signOutFailed}). You are still signed in; try again.
          </p>
        ) : null}
      </header>
      <Section title="What you get when you arrive" first>
        <p class="prose">
          Your first question starts a visit: an anonymous visitor with a copy of a synthetic household's ledger (352
          transactions, January to June 2025). No name, no email. A session cookie (HttpOnly, 12 hours, renewed while you use
          the site) says which visitor you are. Signing up attaches an email and a password to that same visitor, so you keep
          the ledger you built.
        </p>
      </Section>
      <Section title="What is stored">
        <ol class="rows">
          <li class="row">Your ledger: the copy you started with, and every change and import you allowed.</li>
          <li class="row">Statements you upload, as the files you sent, until you delete them or your visit ends.</li>
          <li class="row">Your conversations, and what you asked the agent to remember.</li>
          <li class="row">A trace of every model call and tool call of your turns: what was asked, what the tools returned, the tokens and the cost.</li>
          <li class="row">For signed-up accounts: the email and a salted argon2 hash of the password, never the password.</li>
          <li class="row">A daily count of messages per network address, kept as a salted hash of the address and the day: never the address itself.</li>
          <li class="row">Where the site runs behind its CDN, a coarse location (country, at most city) of each turn, from the CDN's headers. No browser prompt.</li>
        </ol>
      </Section>
      <Section title="Who can read it">
        <p class="prose">
          You, through these pages. The site's operator, through the operator's room: traces hold ledger contents. The model
          provider the site is configured with receives your questions and the tool results of your turns, because that is
          how the agent answers. Nothing is sold or shared with anyone else.
        </p>
      </Section>
      <Section title="If you import a real statement">
        <p class="prose">
          Don't, unless you are content for the operator and the model provider to read it. The file is kept so the importer
          can read it; the rows it adds become part of your ledger. Deleting everything below removes both.
        </p>
      </Section>
      <Statements visiting={Boolean(visitor)} />
      <AccountSecurity />
      {visitor ? (
        <Section
          title="Take your data with you"
          note="One zip of four files: an hledger journal, a Beancount file, a CSV of every posting and a JSON of everything (conversations included), which the kakeibo command restores. A few downloads a day."
        >
          <DownloadData />
        </Section>
      ) : null}
      <Section title="How long it lasts" note="An anonymous visit not used for 24 hours is deleted by the nightly sweep, with everything of it. A signed-up account stays until you delete it.">
        <DeleteEverything
          onDone={() => {
            void refresh();
          }}
        />
      </Section>
      <p class="tiny faint dash-foot">
        The rules above are the code's: the sweep is the <span class="mono">reap</span> function, deletion cascades through every table
        that names your visitor.
      </p>
    </Page>
  );
}

type Download = { state: 'idle' | 'working' } | { state: 'done'; filename: string } | { state: 'failed'; why: string };

function DownloadData() {
  const [download, setDownload] = useState<Download>({ state: 'idle' });
  async function fetchZip() {
    setDownload({ state: 'working' });
    try {
      const { blob, filename } = await api.exportData();
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = filename;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      setDownload({ state: 'done', filename });
    } catch (e) {
      setDownload({ state: 'failed', why: e instanceof Error ? e.message : String(e) });
    }
  }
  return (
    <div class="delete-box">
      <button type="button" class="btn btn-secondary" disabled={download.state === 'working'} onClick={() => void fetchZip()}>
        {download.state === 'working' ? 'Preparing…' : 'Download my data'}
      </button>
      {download.state === 'done' ? (
        <p class="small" role="status" style={{ marginTop: '10px' }}>
          <Mark tone="ok">saved</Mark> <span class="mono">{download.filename}</span>
        </p>
      ) : null}
      {download.state === 'failed' ? (
        <p class="small" role="alert" style={{ marginTop: '10px' }}>
          <Mark tone="danger">failed</Mark> {download.why}
        </p>
      ) : null}
    </div>
  );
}

type State = 'idle' | 'armed' | 'deleting' | 'done' | 'failed';

function DeleteEverything({ onDone }: { onDone: () => void }) {
  const [state, setState] = useState<State>('idle');
  async function remove() {
    setState('deleting');
    try {
      await api.deleteAccount();
      setState('done');
      onDone();
    } catch (e) {
      // No session means there is nothing of yours left to delete.
      if (e instanceof ApiError && e.status === 401) {
        setState('done');
        onDone();
      } else setState('failed');
    }
  }
  if (state === 'done') {
    return (
      <div class="delete-box" role="status">
        <p class="label">deleted</p>
        <p class="prose" style={{ marginTop: '6px' }}>
          Everything is gone: the ledger, the conversations, the traces, the uploads and the visitor. Opening the chat again
          starts over with a fresh copy.
        </p>
      </div>
    );
  }
  if (state === 'idle') {
    return (
      <div class="delete-box">
        <button type="button" class="btn btn-secondary" onClick={() => setState('armed')}>
          Delete everything now
        </button>
      </div>
    );
  }
  return (
    <div class="delete-box">
      {state === 'failed' ? (
        <p class="small" role="alert">
          <Mark tone="danger">failed</Mark> Nothing was deleted. Reload and try again; an anonymous visit is also removed
          automatically 24 hours after its last use.
        </p>
      ) : (
        <p class="prose">
          This deletes your ledger, your conversations, every trace, your uploads and the account itself. It cannot be undone.
          To keep a copy, download your data first (above).
        </p>
      )}
      <div class="btn-row" style={{ marginTop: '16px' }}>
        <button type="button" class="btn btn-primary" disabled={state === 'deleting'} onClick={() => void remove()}>
          {state === 'deleting' ? 'Deleting…' : 'Delete it all'}
        </button>
        <button type="button" class="btn btn-secondary" disabled={state === 'deleting'} onClick={() => setState('idle')}>
          Keep it
        </button>
      </div>
    </div>
  );
}
