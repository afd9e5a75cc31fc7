// The pages a mailed link opens, and the account's address and password controls:
// - /forgot-password: an address in, a reset link mailed to it (the same answer whether or not
//   it has an account);
// - /reset-password#token=…: a new password; every session of the account ends;
// - /verify-email#token=…: the address proven (no identity provider joins an unproven one);
// - <AccountSecurity>, on /privacy: the address's state with "send the link again", and a
//   password change with the current one (every other session ends).
// Links carry the token in the fragment, which the browser never sends anywhere; the page posts it.

import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api/client';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { Section } from '../components/paper';
import { refusalSentence } from '../lib/refusals';
import { useSession } from '../session';

/** The token a mailed link carries after `#token=`. */
export function tokenFromHash(hash: string): string | null {
  const value = new URLSearchParams(hash.replace(/^#/, '')).get('token');
  return value && value.trim() !== '' ? value.trim() : null;
}

/** What a refusal of these routes says to the person. */
function sentence(err: unknown): string {
  if (err instanceof ApiError && err.reason === 'mail_off') return 'This site sends no mail, so it cannot send that link.';
  if (err instanceof ApiError && [400, 401, 403, 409, 410, 429].includes(err.status)) return err.message;
  return refusalSentence(err).text;
}

function Failed({ text }: { text: string }) {
  return (
    <p class="small" role="alert" style={{ marginTop: '16px' }}>
      <Mark tone="danger">failed</Mark> {text}
    </p>
  );
}

function Done({ text }: { text: string }) {
  return (
    <p class="small" role="status" style={{ marginTop: '16px' }}>
      <Mark tone="ok">done</Mark> {text}
    </p>
  );
}

function PasswordField({ id, label, value, onInput, autoComplete }: { id: string; label: string; value: string; onInput: (v: string) => void; autoComplete: string }) {
  return (
    <>
      <label class="label faint" for={id} style={{ marginTop: '24px' }}>
        {label}
      </label>
      <input
        id={id}
        class="writing-line"
        type="password"
        autoComplete={autoComplete}
        required
        value={value}
        onInput={(e) => onInput((e.currentTarget as HTMLInputElement).value)}
      />
    </>
  );
}

export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.requestPasswordReset(email);
      setSent(true);
    } catch (err) {
      setError(sentence(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <Page genre="paper" title="Forgot your password" mainClass="sign-in">
      <h1 class="headline">Forgot your password</h1>
      <p class="small muted" style={{ marginTop: '8px' }}>
        We mail a link to the address. It works for an hour, once; setting the new password signs the account out everywhere.
      </p>
      {sent ? (
        <Done text="If an account has that address, a link is on its way. Check the inbox (and the spam folder)." />
      ) : (
        <form class="sign-form" onSubmit={(e) => void submit(e)}>
          <label class="label faint" for="email">
            Email
          </label>
          <input
            id="email"
            class="writing-line"
            type="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
          />
          {error ? <Failed text={error} /> : null}
          <button type="submit" class="btn btn-primary" disabled={busy} style={{ marginTop: '28px' }}>
            {busy ? 'Sending…' : 'Send the link'}
          </button>
        </form>
      )}
      <p class="small" style={{ marginTop: '24px' }}>
        <a href="/sign-in">Back to sign in</a>.
      </p>
    </Page>
  );
}

export function ResetPassword() {
  const token = tokenFromHash(typeof location === 'undefined' ? '' : location.hash);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | null>(token ? null : 'This link has no token. Open the link from the mail again.');
  async function submit(e: Event) {
    e.preventDefault();
    if (!token) return;
    setBusy(true);
    setError(null);
    try {
      await api.resetPassword(token, password);
      setDone(true);
    } catch (err) {
      setError(sentence(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <Page genre="paper" title="Set a new password" mainClass="sign-in">
      <h1 class="headline">Set a new password</h1>
      {done ? (
        <>
          <Done text="The password is set, and every session of the account has ended." />
          <p class="small" style={{ marginTop: '24px' }}>
            <a href="/sign-in">Sign in</a> with the new password.
          </p>
        </>
      ) : (
        <form class="sign-form" onSubmit={(e) => void submit(e)}>
          <PasswordField id="password" label="New password" value={password} onInput={setPassword} autoComplete="new-password" />
          <p class="tiny faint" style={{ marginTop: '6px' }}>
            At least 10 characters, and not easy to guess: a few uncommon words work well.
          </p>
          {error ? <Failed text={error} /> : null}
          <button type="submit" class="btn btn-primary" disabled={busy || !token} style={{ marginTop: '28px' }}>
            {busy ? 'Setting…' : 'Set the password'}
          </button>
        </form>
      )}
    </Page>
  );
}

export function VerifyEmail() {
  const { refresh } = useSession();
  const [state, setState] = useState<'working' | 'done' | 'failed'>('working');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const token = tokenFromHash(location.hash);
    if (!token) {
      setState('failed');
      setError('This link has no token. Open the link from the mail again.');
      return;
    }
    api
      .verifyEmail(token)
      .then(async () => {
        setState('done');
        await refresh();
      })
      .catch((err: unknown) => {
        setState('failed');
        setError(sentence(err));
      });
  }, []);
  return (
    <Page genre="paper" title="Confirm your address" mainClass="sign-in">
      <h1 class="headline">Confirm your address</h1>
      {state === 'working' ? (
        <p class="small muted" role="status" style={{ marginTop: '16px' }}>
          Confirming…
        </p>
      ) : null}
      {state === 'done' ? <Done text="Your address is confirmed." /> : null}
      {state === 'failed' && error ? <Failed text={error} /> : null}
      <p class="small" style={{ marginTop: '24px' }}>
        <a href="/chat">To the chat</a>.
      </p>
    </Page>
  );
}

/** The signed-in account's address and password, on /privacy. */
export function AccountSecurity() {
  const { session, refresh } = useSession();
  const visitor = session?.visitor;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [busy, setBusy] = useState(false);
  const [changed, setChanged] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [resent, setResent] = useState<string | null>(null);
  if (!visitor || visitor.anonymous) return null;

  async function change(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setChanged(false);
    try {
      await api.changePassword(current, next);
      setChanged(true);
      setCurrent('');
      setNext('');
      await refresh();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That is not the current password.' : sentence(err));
    } finally {
      setBusy(false);
    }
  }

  async function resend() {
    setResent(null);
    try {
      const answer = await api.resendVerification();
      setResent(answer.sent ? 'A new link is on its way; the earlier one no longer works.' : 'Your address is confirmed already.');
    } catch (err) {
      setResent(sentence(err));
    }
  }

  return (
    <Section title="Address and password">
      <p class="prose">
        {visitor.email_verified ? (
          <>
            <Mark tone="ok">confirmed</Mark> {visitor.email}
          </>
        ) : (
          <>
            <Mark tone="warn">not confirmed</Mark> {visitor.email}. Until you follow the link we mailed, no Google sign-in is
            joined to this account.{' '}
            {session?.mail ? (
              <button type="button" class="link-button" onClick={() => void resend()}>
                Send the link again
              </button>
            ) : null}
          </>
        )}
      </p>
      {resent ? (
        <p class="small" role="status">
          {resent}
        </p>
      ) : null}
      <form class="sign-form" onSubmit={(e) => void change(e)}>
        <PasswordField id="current-password" label="Current password" value={current} onInput={setCurrent} autoComplete="current-password" />
        <PasswordField id="new-password" label="New password" value={next} onInput={setNext} autoComplete="new-password" />
        {error ? <Failed text={error} /> : null}
        {changed ? <Done text="Password changed. Every other session of the account has ended." /> : null}
        <button type="submit" class="btn btn-secondary" disabled={busy} style={{ marginTop: '28px' }}>
          {busy ? 'Changing…' : 'Change the password'}
        </button>
      </form>
    </Section>
  );
}
