// /sign-in and /sign-up: an email and a password. Signing up keeps the ledger the visitor built
// anonymously (the same visitor gets credentials); signing in brings an anonymous visitor's
// conversations along. A failed sign-in never says which of the two was wrong. With Google sign-in
// on (the session says `google_sign_in`), a link starts it; its failures come back as `?error=`.

import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../api/client';
import { BotCheckWidget } from '../components/bot-check';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { googleRefusal, refusalSentence } from '../lib/refusals';
import { useSession } from '../session';

export function SignIn() {
  const { path, route, query } = useLocation();
  const up = path === '/sign-up';
  const { session, refresh } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(query.error ? googleRefusal(query.error) : null);
  const anonymous = session?.visitor?.anonymous ?? true;
  // Signing up starts or grows a visit: while the session asks for the bot check, its token goes
  // along (single-use: each try spends one and the widget issues the next).
  const botCheck = up ? (session?.bot_check ?? null) : null;
  const [botToken, setBotToken] = useState<string | null>(null);
  const [botRound, setBotRound] = useState(0);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const token = botCheck !== null && botToken !== null ? botToken : undefined;
    if (token !== undefined) {
      setBotToken(null);
      setBotRound((r) => r + 1);
    }
    try {
      const answer = up ? await api.signUp(email, password, token) : await api.signIn(email, password);
      const next = await refresh();
      const operator = next?.visitor?.operator ?? answer.visitor?.operator;
      route(operator ? '/admin' : '/chat');
    } catch (err) {
      // Only a refused pair of credentials gets the vague sentence (it must not tell which email
      // has an account); a limit, a bad field, or the site being down says what it is.
      if (!up && err instanceof ApiError && err.status === 401) setError('That email and password did not match.');
      else if (err instanceof ApiError && [400, 409, 429].includes(err.status)) setError(err.message);
      else setError(refusalSentence(err).text);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Page genre="paper" title={up ? 'Sign up' : 'Sign in'} mainClass="sign-in">
      <h1 class="headline">{up ? 'Sign up' : 'Sign in'}</h1>
      <p class="small muted" style={{ marginTop: '8px' }}>
        {up
          ? 'An account keeps your ledger past 24 hours and raises the daily messages from 8 to 25. The ledger you built so far stays yours.'
          : 'To your account, or the operator’s. A visit you started without one comes with you.'}
      </p>
      <form class="sign-form" onSubmit={(e) => void submit(e)}>
        <label class="label faint" for="email">
          Email
        </label>
        <input
          id="email"
          class="writing-line"
          type="email"
          autoComplete={up ? 'email' : 'username'}
          required
          value={email}
          onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
        />
        <label class="label faint" for="password" style={{ marginTop: '24px' }}>
          Password
        </label>
        <input
          id="password"
          class="writing-line"
          type="password"
          autoComplete={up ? 'new-password' : 'current-password'}
          required
          minLength={up ? 10 : undefined}
          value={password}
          onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
        />
        {up ? (
          <p class="tiny faint" style={{ marginTop: '6px' }}>
            At least 10 characters, and not easy to guess: a few uncommon words work well.
          </p>
        ) : null}
        {error ? (
          <p class="small" role="alert" style={{ marginTop: '16px' }}>
            <Mark tone="danger">failed</Mark> {error}
          </p>
        ) : null}
        {botCheck ? <BotCheckWidget siteKey={botCheck.site_key} round={botRound} onToken={setBotToken} /> : null}
        <button type="submit" class="btn btn-primary" disabled={busy || (botCheck !== null && botToken === null)} style={{ marginTop: '28px' }}>
          {busy ? (up ? 'Signing up…' : 'Signing in…') : up ? 'Sign up' : 'Sign in'}
        </button>
      </form>
      {session?.google_sign_in ? (
        <p style={{ marginTop: '24px' }}>
          {/* A real navigation (to Google and back), which the client-side router must leave alone. */}
          <a class="btn btn-secondary" href="/api/session/google/start" target="_top">
            {up ? 'Sign up with Google' : 'Sign in with Google'}
          </a>
        </p>
      ) : null}
      <p class="small" style={{ marginTop: '24px' }}>
        {up ? (
          <>
            Have an account? <a href="/sign-in">Sign in</a>.
          </>
        ) : (
          <>
            No account? <a href="/sign-up">Sign up</a>
            {anonymous ? ' and keep the ledger you have built' : ''}.
            {session?.mail ? (
              <>
                {' '}
                <a href="/forgot-password">Forgot your password?</a>
              </>
            ) : null}
          </>
        )}
      </p>
    </Page>
  );
}
