// /runs/:id: one turn's timeline — model calls, tool calls, confirmations, evictions, errors —
// with tokens, cache hits, latency and cost. Another visitor's run is the 404 page, exactly like
// a run that never existed.

import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api } from '../api/client';
import type { RunDetail, RunEvent } from '../api/types';
import { Page } from '../components/page';
import { Badge, Card, JsonBlock, Stat, StatusBadge } from '../components/terminal';
import { count, dateTime, percentOf, seconds } from '../lib/format';
import { formatMicroUsd } from '../lib/money';
import { isScripted, useSession } from '../session';
import { NotFound } from './not-found';

export function RunPage() {
  const { params } = useRoute();
  const { session } = useSession();
  const operator = session?.visitor?.operator === true;
  const id = params.id ?? '';
  const [run, setRun] = useState<RunDetail | null | undefined>(undefined);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    // The visitor's own run; for the operator, any visitor's (through the admin door).
    api
      .run(id)
      .then(async (own) => (own === null && operator ? api.adminRun(id) : own))
      .then(setRun)
      .catch((e) => setFailed(e instanceof Error ? e.message : String(e)));
  }, [id, operator]);
  if (run === null) return <NotFound />;
  return (
    <Page genre="terminal" title={run ? `Trace ${run.id.slice(0, 8)}` : 'Trace'}>
      <p class="run-top">
        <a href="/runs">← traces</a> <span class="mono t-muted">{id}</span> {run ? <StatusBadge status={run.status} /> : null}
      </p>
      {run === undefined ? <h1 class="visually-hidden">Trace</h1> : null}
      {failed ? <p role="alert">failed: {failed}</p> : null}
      {run === undefined && !failed ? <p class="t-muted">reading…</p> : null}
      {run ? <Timeline run={run} /> : null}
    </Page>
  );
}

function Timeline({ run }: { run: RunDetail }) {
  const scripted = isScripted(run.provider, run.model);
  return (
    <>
      <h1 class="visually-hidden">Trace of the run started {dateTime(run.started_at)}</h1>
      <Card title={run.parent_run_id ? 'task' : 'question'}>
        <p class="run-question">{run.question ?? 'Not recorded: this run is from before traces kept their question.'}</p>
        {run.parent_run_id ? (
          <p class="t-muted run-parent">
            A subagent's run: its tokens and cost are counted in{' '}
            <a href={`/runs/${run.parent_run_id}`} class="mono">
              the run that started it ({run.parent_run_id.slice(0, 8)})
            </a>
            .
          </p>
        ) : null}
      </Card>
      <Card>
        <div class="stats six">
          <Stat label="channel" value={run.channel} />
          <Stat label="model" value={run.model} hint={scripted ? 'scripted demo, not a language model' : run.provider} />
          <Stat label="input" value={count(run.input_tokens)} hint={`${percentOf(run.cached_tokens, run.input_tokens, 1)} cached`} />
          <Stat label="output" value={count(run.output_tokens)} />
          <Stat label="cost" value={formatMicroUsd(run.cost_micro_usd)} hint="list-price estimate" />
          <Stat label="latency" value={seconds(run.latency_ms)} hint={dateTime(run.started_at)} />
        </div>
      </Card>
      <ol class="timeline" aria-label="Events of the run, in order">
        {run.events.map((e) => (
          <li key={e.seq}>
            <EventCard event={e} />
          </li>
        ))}
      </ol>
      {run.events.length === 0 ? <p class="t-muted">No events were recorded for this run.</p> : null}
      {run.subagents.length > 0 ? (
        <Card title="subagents">
          <ul class="run-subagents" aria-label="The subagents this run started">
            {run.subagents.map((sub) => (
              <li key={sub.id}>
                <a href={`/runs/${sub.id}`} class="mono">
                  {sub.id.slice(0, 8)}
                </a>{' '}
                <StatusBadge status={sub.status} /> {sub.question ?? ''}{' '}
                <span class="t-muted">
                  · {sub.iterations} model {sub.iterations === 1 ? 'call' : 'calls'} · {seconds(sub.latency_ms)}
                </span>
              </li>
            ))}
          </ul>
        </Card>
      ) : null}
    </>
  );
}

function EventCard({ event: e }: { event: RunEvent }) {
  const seq = String(e.seq).padStart(2, '0');
  const latency = e.latency_ms !== null ? <span class="event-latency num">{count(e.latency_ms)} ms</span> : null;
  if (e.type === 'model_call') {
    const p = e.payload;
    return (
      <div class="card event-card">
        <div class="event-head">
          <span class="event-seq num">{seq}</span>
          <Badge tone="accent">model call</Badge>
          <span class="num tiny-t">
            {count(e.input_tokens ?? 0)} in · {count(e.cached_tokens ?? 0)} cached · {count(e.output_tokens ?? 0)} out
          </span>
          <Badge>{p.stopReason}</Badge>
          {latency}
        </div>
        {e.thought_summary ? <JsonBlock label="thought summary" value={e.thought_summary} /> : null}
        <JsonBlock label="content" value={p.content} />
      </div>
    );
  }
  if (e.type === 'tool_call') {
    const p = e.payload;
    const write = p.tier === 'write';
    return (
      <div class={`card event-card${p.error ? ' danger' : ''}`}>
        <div class="event-head">
          <span class="event-seq num">{seq}</span>
          <Badge tone={p.error ? 'danger' : write ? 'warn' : 'neutral'}>tool · {p.name}</Badge>
          {write ? <Badge tone="warn">write</Badge> : null}
          {p.confirmed === true ? <Badge tone="ok">confirmed</Badge> : null}
          {p.confirmed === false ? <Badge>declined</Badge> : null}
          {p.error ? <Badge tone="danger">error</Badge> : null}
          {latency}
        </div>
        {p.error ? <p class="tool-error">{p.result.slice(0, 400)}</p> : null}
        <JsonBlock label="args" value={p.args} />
        <JsonBlock label="result" value={p.result} />
      </div>
    );
  }
  if (e.type === 'confirm') {
    const p = e.payload;
    return (
      <div class="card event-card warn">
        <div class="event-head">
          <span class="event-seq num">{seq}</span>
          <Badge tone="warn">confirmation</Badge>
          {p.allowed === true ? <Badge tone="ok">allowed</Badge> : null}
          {p.allowed === false && p.expired !== true ? <Badge>declined</Badge> : null}
          {p.expired === true ? <Badge tone="warn">expired</Badge> : null}
          {p.allowed == null ? <Badge tone="warn">awaiting</Badge> : null}
          {latency}
        </div>
        <p class="event-text">{p.summary}</p>
        <JsonBlock label="args" value={p.args} />
      </div>
    );
  }
  if (e.type === 'summary_eviction') {
    const p = e.payload;
    return (
      <div class="card event-card accent">
        <div class="event-head">
          <span class="event-seq num">{seq}</span>
          <Badge tone="accent">context eviction</Badge>
          <span class="tiny-t">
            {count(p.tokensBefore)} → {count(p.tokensAfter)} tokens · {count(p.evictedTurns)} turns summarised
          </span>
          {latency}
        </div>
        <JsonBlock label="summary" value={p.summary} open />
      </div>
    );
  }
  // An error, or an event stored in an older shape: shown as stored.
  return (
    <div class="card event-card danger">
      <div class="event-head">
        <span class="event-seq num">{seq}</span>
        <Badge tone="danger">{e.type === 'unread' ? e.payload.kind : e.type === 'error' ? `error · ${e.payload.kind}` : 'event'}</Badge>
        {latency}
      </div>
      <JsonBlock label="payload" value={e.type === 'unread' ? e.payload.stored : e.payload} open />
    </div>
  );
}
