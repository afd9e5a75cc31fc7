// /runs: the visitor's own traces, one row per turn (the machine room).

import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { RunSummary } from '../api/types';
import { Page } from '../components/page';
import { RunsTable } from '../components/table';
import { Card, EmptyState, Stat } from '../components/terminal';
import { count, percentOf, seconds } from '../lib/format';
import { formatMicroUsd } from '../lib/money';

export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? null) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export function Runs() {
  const [runs, setRuns] = useState<RunSummary[] | undefined>(undefined);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    api
      .runs()
      .then((r) => setRuns(r?.runs ?? []))
      .catch((e) => setFailed(e instanceof Error ? e.message : String(e)));
  }, []);
  return (
    <Page genre="terminal" title="Traces">
      <h1 class="term-title">Traces</h1>
      <p class="term-sub">One row per turn. Every model call and tool call is recorded as it happens; nothing is sampled.</p>
      {failed ? <p class="t-empty-title" role="alert">failed: {failed}</p> : null}
      {runs === undefined && !failed ? <p class="t-muted">reading…</p> : null}
      {runs && runs.length === 0 ? <EmptyState title="No runs yet." hint="Ask something on the chat page." /> : null}
      {runs && runs.length > 0 ? <RunsSummary runs={runs} /> : null}
    </Page>
  );
}

function RunsSummary({ runs }: { runs: RunSummary[] }) {
  const input = runs.reduce((s, r) => s + r.input_tokens, 0);
  const cached = runs.reduce((s, r) => s + r.cached_tokens, 0);
  const cost = runs.reduce((s, r) => s + r.cost_micro_usd, 0);
  return (
    <>
      <Card>
        <div class="stats four">
          <Stat label="runs" value={count(runs.length)} />
          <Stat label="cache savings" value={percentOf(cached, input)} hint={`${count(cached)} / ${count(input)} input tokens cached`} />
          <Stat label="total cost" value={formatMicroUsd(cost)} hint="list-price estimate" />
          <Stat label="median latency" value={seconds(median(runs.map((r) => r.latency_ms)))} />
        </div>
      </Card>
      <Card>
        <RunsTable runs={runs} caption="Your runs, newest first" />
      </Card>
    </>
  );
}
