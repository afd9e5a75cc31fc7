// /chat: the agent as a page of the account book. Each question is a heading; the answer streams
// in below it, the tools post in the margin as they run, and a write stops the turn at a slip
// that the person answers. Tokens arrive over `fetch` with a stream reader (SSE from a POST).

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { ApiError, api } from '../api/client';
import type { ConversationSummary, TurnEndEvent } from '../api/types';
import { BotCheckWidget } from '../components/bot-check';
import { ExchangeView } from '../components/exchange-view';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { UploadPanel } from '../components/upload';
import { expired as expireSlip, refused, send, type Slip } from '../lib/confirm';
import { mayAsk } from '../lib/bot-gate';
import { messagesText } from '../lib/messages';
import { applyEvent, exchangeFromPending, exchangesFromHistory, newExchange, settleSlip, updateSlip, type Exchange } from '../lib/exchange';
import { shortDate } from '../lib/format';
import { refusalSentence, type Said } from '../lib/refusals';
import { runLeg, type LegOutcome } from '../lib/leg';
import { modelLabel, useSession } from '../session';
import { NotFound } from './not-found';

const SUGGESTIONS: { question: string; label: string; write?: boolean }[] = [
  { question: 'What did I spend on groceries in March 2025?', label: 'spending' },
  { question: 'What subscriptions am I paying for?', label: 'recurring' },
  { question: 'Anything unusual in April 2025?', label: 'anomalies' },
  { question: 'Set budgets for Dining and Transport for June 2025.', label: 'two budgets', write: true },
  { question: 'Set a ₹20,000 monthly budget for Groceries.', label: 'budget', write: true },
];

// The conversation a visit is in, kept across reloads: `/chat` reopens it until the person starts
// a new one. Storage may be refused (private modes): then `/chat` simply opens a new conversation.
const CURRENT_KEY = 'kakeibo:current-conversation';

function rememberedConversation(): string | null {
  try {
    return localStorage.getItem(CURRENT_KEY);
  } catch {
    return null;
  }
}

function remember(id: string | null) {
  try {
    if (id === null) localStorage.removeItem(CURRENT_KEY);
    else localStorage.setItem(CURRENT_KEY, id);
  } catch {
    // Not kept: the next visit to /chat opens a new conversation.
  }
}

/** Marks the first streamed token once it is on screen (navigation start → first answer painted). */
function markFirstToken() {
  if (performance.getEntriesByName('kakeibo:first-token').length > 0) return;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      if (performance.getEntriesByName('kakeibo:first-token').length === 0) performance.mark('kakeibo:first-token');
    }),
  );
}

export function Chat() {
  const { params } = useRoute();
  const { route, query } = useLocation();
  const { session, refresh } = useSession();
  const [exchanges, setExchanges] = useState<Exchange[]>([]);
  const [conversationId, setConversationId] = useState<string | null>(params.id ?? null);
  const [conversations, setConversations] = useState<ConversationSummary[] | null>(null);
  const [loadingHistory, setLoadingHistory] = useState(Boolean(params.id));
  const [missing, setMissing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [banner, setBanner] = useState<Said | null>(null);
  // A question another page began (the dashboard's "Say what it was"), for the person to finish
  // and send: never sent on their behalf.
  const [draft, setDraft] = useState(() => (typeof query.ask === 'string' ? query.ask.slice(0, 400) : ''));
  const [uploadOpen, setUploadOpen] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const composer = useRef<HTMLInputElement>(null);
  const end = useRef<HTMLDivElement>(null);
  // The conversation on the page, as async work sees it (state read in a closure may be stale).
  const current = useRef<string | null>(params.id ?? null);

  const visitor = session?.visitor ?? null;
  const messages = session?.messages;
  // The bot check, while the session asks for it: the widget's unspent token opens the composer.
  const botCheck = session?.bot_check ?? null;
  const [botToken, setBotToken] = useState<string | null>(null);
  const [botRound, setBotRound] = useState(0);
  const open = mayAsk({ asked: botCheck !== null, token: botToken });

  // Leaving the page stops reading the stream in flight, so its events land nowhere.
  useEffect(() => () => abort.current?.abort(), []);

  // A conversation named in the address is read back (unless it is the one on the page, whose
  // address this page set itself), with its turns waiting for a decision live again; an unknown
  // one is the 404 page. No id: the visit's current conversation, else a new one.
  useEffect(() => {
    const id = params.id ?? null;
    // `/chat?new` (and `?ask=`, a question another page began) start a new conversation.
    const fresh = typeof query.new === 'string' || typeof query.ask === 'string';
    if (id === null && fresh) remember(null);
    const reopen = id === null && !fresh ? rememberedConversation() : null;
    if (reopen !== null) {
      route(`/chat/${reopen}`, true);
      return;
    }
    if (id === null) {
      if (missing || current.current !== null) {
        setMissing(false);
        setExchanges([]);
        setConversationId(null);
        current.current = null;
      }
      setLoadingHistory(false);
      return;
    }
    if (id === current.current && exchanges.length > 0) return;
    let live = true;
    setLoadingHistory(true);
    api
      .conversation(id)
      .then((found) => {
        if (!live) return;
        if (!found) {
          setConversationId(null);
          current.current = null;
          if (rememberedConversation() === id) {
            // The conversation this visit was in is gone (signed out, deleted): a new one.
            remember(null);
            route('/chat', true);
          } else {
            setMissing(true);
          }
        } else {
          setMissing(false);
          setConversationId(found.id);
          current.current = found.id;
          remember(found.id);
          const waiting = (found.pending ?? []).map(exchangeFromPending).filter((x): x is Exchange => x !== null);
          setExchanges([...exchangesFromHistory(found.messages), ...waiting]);
          if (waiting.length > 0) focusNext();
        }
      })
      .catch((e) => live && setBanner(refusalSentence(e)))
      .finally(() => live && setLoadingHistory(false));
    return () => {
      live = false;
    };
  }, [params.id]);

  useEffect(() => {
    if (!visitor) {
      setConversations(null);
      return;
    }
    api
      .conversations()
      .then((r) => setConversations(r?.conversations ?? []))
      .catch(() => setConversations([]));
  }, [visitor?.id, exchanges.length === 0]);

  // Follow the answer down the page while the reader is near the end.
  const follow = useCallback((smooth: boolean) => {
    const el = end.current;
    if (!el) return;
    const distance = document.documentElement.scrollHeight - (window.scrollY + window.innerHeight);
    if (distance > 220) return;
    const reduce = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    el.scrollIntoView({ block: 'end', behavior: smooth && !reduce ? 'smooth' : 'auto' });
  }, []);

  // A refusal is read where it is: in view, above the composer.
  const bannerRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (banner) bannerRef.current?.scrollIntoView({ block: 'nearest' });
  }, [banner]);

  const update = useCallback((key: string, change: (x: Exchange) => Exchange) => {
    setExchanges((xs) => xs.map((x) => (x.key === key ? change(x) : x)));
  }, []);

  const note = (key: string, tone: 'warn' | 'danger', word: string, text: string) =>
    update(key, (x) => ({ ...x, notes: [...x.notes, { tone, word, text }] }));

  /**
   * Streams one leg of a turn into exchange `key`. Throws only for a refusal before any event;
   * once the answer has begun, a stop or a break is an outcome and a note, never a refusal.
   */
  async function stream(key: string, start: (signal: AbortSignal) => Promise<Response>): Promise<LegOutcome> {
    const controller = new AbortController();
    abort.current = controller;
    setBusy(true);
    try {
      const { outcome, detail } = await runLeg(start, controller.signal, (event) => {
        if (controller.signal.aborted) return;
        update(key, (x) => applyEvent(x, event));
        if (event.event === 'token') {
          markFirstToken();
          follow(false);
        } else {
          follow(true);
        }
        if (event.event === 'turn_end') {
          const endEvent = event.data as TurnEndEvent;
          if (endEvent.conversation_id && current.current !== endEvent.conversation_id) {
            current.current = endEvent.conversation_id;
            remember(endEvent.conversation_id);
            setConversationId(endEvent.conversation_id);
            route(`/chat/${endEvent.conversation_id}`, true);
          }
        }
      });
      if (outcome === 'stopped') {
        update(key, (x) => ({ ...x, status: 'stopped' }));
        note(
          key,
          'warn',
          'note',
          'Stopped reading. The server finishes this turn anyway, and its trace keeps what it did; if it asks to write, nothing is written without you: that request expires unanswered.',
        );
      } else if (outcome === 'cut') {
        update(key, (x) => ({ ...x, status: 'failed' }));
        note(key, 'danger', 'failed', `The answer was cut off: ${detail ?? 'the stream broke'}. What the server finished is kept in the trace; ask again to go on.`);
      }
      return outcome;
    } finally {
      if (abort.current === controller) abort.current = null;
      setBusy(false);
      void refresh();
    }
  }

  async function ask(question: string) {
    const text = question.trim();
    if (!text || busy || !open) return;
    // A token goes with one try only (the server spends it, answered or refused).
    const token = botCheck !== null && botToken !== null ? botToken : undefined;
    if (token !== undefined) {
      setBotToken(null);
      setBotRound((r) => r + 1);
    }
    setBanner(null);
    setDraft('');
    setUploadOpen(false);
    const x = newExchange(text);
    setExchanges((xs) => [...xs, x]);
    requestAnimationFrame(() => end.current?.scrollIntoView({ block: 'end' }));
    try {
      await stream(x.key, (signal) => api.chat(text, current.current, signal, token));
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') return;
      // Refused before the turn started: the question was not answered, so it leaves the page.
      setExchanges((xs) => xs.filter((other) => other.key !== x.key));
      setDraft(text);
      setBanner(refusalSentence(e, visitor?.anonymous ?? true));
    } finally {
      focusNext();
    }
  }

  async function decide(key: string, slip: Slip) {
    if (busy) return;
    const sending = send(slip);
    if (!sending) {
      update(key, (x) => updateSlip(x, slip.key, () => slip));
      return;
    }
    update(key, (x) => ({ ...updateSlip(x, slip.key, () => sending.slip), status: 'running' }));
    setBanner(null);
    try {
      // Once the stream began the server had the decisions: the card says what it reported.
      const outcome = await stream(key, (signal) => api.confirm(slip.suspendedTurnId, sending.decisions, signal));
      update(key, (x) => {
        const settled = settleSlip(x, slip.key, outcome);
        const back = settled.slips.find((s) => s.key === slip.key)?.status === 'pending';
        return back ? { ...settled, status: 'waiting' } : settled;
      });
      // The answer after a decision ends above the composer, not under it.
      requestAnimationFrame(() => end.current?.scrollIntoView({ block: 'end' }));
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') {
        update(key, (x) => ({ ...updateSlip(x, slip.key, refused), status: 'waiting' }));
        return;
      }
      if (e instanceof ApiError && e.status === 410) {
        update(key, (x) => ({
          ...updateSlip(x, slip.key, expireSlip),
          status: 'failed',
          notes: [...x.notes, { tone: 'warn', word: 'note', text: refusalSentence(e).text }],
        }));
      } else {
        const said = refusalSentence(e, visitor?.anonymous ?? true);
        update(key, (x) => ({
          ...updateSlip(x, slip.key, refused),
          status: 'waiting',
          notes: said.word === 'paused' ? x.notes : [...x.notes, { tone: said.word === 'note' ? 'warn' : 'danger', word: said.word, text: said.text }],
        }));
        if (said.word === 'paused') setBanner(said);
      }
    } finally {
      focusNext();
    }
  }

  /** After a leg of a turn: a write waiting for the person takes the focus on its heading (never
   * on Allow: a stray Enter must not decide), else the composer. */
  function focusNext() {
    requestAnimationFrame(() => {
      const waiting = document.querySelector<HTMLElement>('.slip[data-status="pending"] h3');
      if (waiting) waiting.focus();
      else composer.current?.focus();
    });
  }

  function newConversation() {
    if (busy) return;
    setExchanges([]);
    setConversationId(null);
    current.current = null;
    remember(null);
    setMissing(false);
    setBanner(null);
    route('/chat', true);
    composer.current?.focus();
  }

  /** A visit that may upload: started, and past the bot check when the session asks for it (the
   * widget's unspent token goes with it, and is spent). */
  async function ensureVisit() {
    if (session?.visitor && botCheck === null) return;
    const token = botCheck !== null ? botToken : null;
    if (botCheck !== null && token === null) {
      throw new ApiError(
        403,
        'This site asks for a quick check that you are a person first: complete it above the message box, then try again.',
        'bot_check_required',
      );
    }
    if (token !== null) {
      setBotToken(null);
      setBotRound((r) => r + 1);
    }
    await api.startVisit(token ?? undefined);
    await refresh();
  }

  // A conversation that is not the visitor's is the 404 page, exactly like one that never existed.
  if (missing) return <NotFound />;
  const waiting = exchanges.some((x) => x.status === 'waiting');
  const outOfMessages = messages != null && messages.left <= 0;

  return (
    <Page genre="paper" title="Chat" mainClass="chat-main">
      {exchanges.length === 0 && !loadingHistory ? (
        <Opening onAsk={(q) => void ask(q)} disabled={busy || !open} conversations={conversations} model={modelLabel(session)} />
      ) : null}
      {loadingHistory ? (
        <p class="muted small" role="status">
          <span class="pulse">Reading the conversation…</span>
        </p>
      ) : null}
      {exchanges.length > 0 || loadingHistory ? <h1 class="visually-hidden">Chat</h1> : null}
      {exchanges.length > 0 ? (
        <div class="chat-bar">
          <span class="tiny faint">{conversationId ? 'This conversation continues with each question.' : 'A new conversation.'}</span>
          <button
            type="button"
            class="link-button small"
            onClick={newConversation}
            disabled={busy || waiting}
            title={waiting ? 'Decide the write that is waiting first (Decline leaves the ledger as it is).' : undefined}
          >
            New conversation
          </button>
        </div>
      ) : null}
      {exchanges.map((x, i) => (
        <ExchangeView
          key={x.key}
          exchange={x}
          first={i === 0}
          onSlipChange={(slip) => update(x.key, (e) => updateSlip(e, slip.key, () => slip))}
          onSend={(slip) => void decide(x.key, slip)}
        />
      ))}
      {banner ? (
        <div class="banner" role="alert" ref={bannerRef}>
          <Mark tone={banner.word === 'failed' ? 'danger' : 'warn'}>{banner.word}</Mark>
          <span>{banner.text}</span>
        </div>
      ) : null}
      {uploadOpen ? (
        <UploadPanel busy={busy || waiting} ensureVisit={ensureVisit} onClose={() => setUploadOpen(false)} onImport={(message) => void ask(message)} />
      ) : null}
      <div ref={end} class="chat-end" />
      {botCheck ? <BotCheckWidget siteKey={botCheck.site_key} round={botRound} onToken={setBotToken} /> : null}
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void ask(draft);
        }}
      >
        <label class="visually-hidden" for="composer-input">
          Ask about your ledger
        </label>
        <div class="composer-line">
          <input
            id="composer-input"
            ref={composer}
            class="composer-input"
            type="text"
            autoComplete="off"
            maxLength={4000}
            placeholder="Ask about your ledger…"
            value={draft}
            readOnly={busy}
            aria-busy={busy}
            onInput={(e) => setDraft((e.currentTarget as HTMLInputElement).value)}
          />
          {busy ? (
            <button type="button" class="btn compact btn-secondary" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          ) : (
            <button type="submit" class="btn compact btn-primary" disabled={draft.trim() === '' || waiting || !open}>
              Ask
            </button>
          )}
          <button type="button" class="btn compact btn-secondary" aria-expanded={uploadOpen} onClick={() => setUploadOpen((o) => !o)} disabled={busy}>
            Statement
          </button>
        </div>
        <p class="composer-foot tiny">
          {waiting ? <span class="tone-warn">A write is waiting for your decision above. </span> : null}
          {messages ? (
            <span class={messages.left <= 2 ? 'tone-warn' : 'faint'} aria-live="polite">
              {messagesText(messages, visitor?.anonymous ?? true, outOfMessages)}
            </span>
          ) : (
            <span class="faint">A visit starts with your first question: 8 messages a day, more once you sign up.</span>
          )}{' '}
          <span class="faint">Model: {modelLabel(session)}.</span>
        </p>
      </form>
    </Page>
  );
}

function Opening({
  onAsk,
  disabled,
  conversations,
  model,
}: {
  onAsk: (q: string) => void;
  disabled: boolean;
  conversations: ConversationSummary[] | null;
  model: string;
}) {
  return (
    <div class="opening">
      <h1 class="ask-heading">Ask the ledger.</h1>
      <p class="muted opening-lead">
        Your ledger starts as 352 synthetic transactions of an Indian household, January to June 2025: generated, not
        anyone's real spending. Every answer is worked out live from it, here by {model}, and each tool the agent calls
        is posted in the margin with what it returned and cost.
      </p>
      <ul class="suggestions" aria-label="Questions to start with">
        {SUGGESTIONS.map((s) => (
          <li key={s.question}>
            <button type="button" class="suggestion" disabled={disabled} onClick={() => onAsk(s.question)}>
              <span class="suggestion-q">{s.question}</span>
              <span class="suggestion-label">
                <span class="label faint">{s.label}</span>
                {s.write ? (
                  <>
                    {' '}
                    <Mark tone="warn">write</Mark>
                  </>
                ) : null}
              </span>
            </button>
          </li>
        ))}
      </ul>
      <p class="small muted opening-note">
        The questions marked write change the ledger: anything that does stops and asks you first. The gate is in the
        loop, not in the prompt, so no text in a statement can make the agent write.
      </p>
      {conversations && conversations.length > 0 ? (
        <section class="section" aria-labelledby="earlier-title">
          <div class="section-head">
            <h2 class="section-title" id="earlier-title">
              Earlier conversations
            </h2>
          </div>
          <ol class="rows conversation-list">
            {conversations.slice(0, 10).map((c) => (
              <li key={c.id} class="row conversation-row">
                <a href={`/chat/${c.id}`}>{c.title || 'Untitled'}</a>
                <span class="tiny faint num">
                  {c.message_count} messages · {shortDate(c.updated_at)}
                </span>
              </li>
            ))}
          </ol>
        </section>
      ) : null}
    </div>
  );
}
