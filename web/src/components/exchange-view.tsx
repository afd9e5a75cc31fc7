// One exchange as a page of the account book: the question as a heading on a heavy rule, the
// answer as prose, the tools in the margin, and the confirmation slip across both columns.

import { useEffect, useRef } from 'preact/hooks';
import type { TurnEndEvent } from '../api/types';
import { choose, chooseAll, ready, slipHeading, verdict, type Slip } from '../lib/confirm';
import { SUBAGENT_TOOL, type Exchange, type TaskItem, type ToolEntry } from '../lib/exchange';
import { count, percentOf, seconds } from '../lib/format';
import { argumentRows, gloss, resultLine } from '../lib/gloss';
import { formatMinor } from '../lib/money';
import { Mark } from './mark';
import { CheckedProse } from './figures';
import { Note } from './paper';

interface Props {
  exchange: Exchange;
  first: boolean;
  onSlipChange: (slip: Slip) => void;
  onSend: (slip: Slip) => void;
}

export function ExchangeView({ exchange: x, first, onSlipChange, onSend }: Props) {
  const pendingWrites = x.slips.filter((s) => s.status === 'pending').flatMap((s) => s.writes);
  const held = x.status === 'waiting' && x.prose.trim() === '';
  const wroteBefore = x.tools.some((t) => t.result?.decision === 'allowed');
  const showRail = x.tools.length > 0 || x.tasks !== undefined || x.account !== null || x.status === 'running';
  return (
    <article class={`exchange${first ? ' first' : ''}`} aria-label={x.question}>
      <h2 class="title question">
        <span>{x.question}</span>
      </h2>
      <div class="spread exchange-spread">
        <div class="answer" aria-live="polite" aria-busy={x.status === 'running'}>
          {x.superseded ? <Superseded draft={x.superseded} done={x.status !== 'running'} /> : null}
          {x.prose ? <CheckedProse text={x.prose} check={x.figures} runId={x.runId} /> : null}
          {x.status === 'running' && x.prose === '' ? (
            <p class="muted">
              <span class="pulse">Working…</span>
            </p>
          ) : null}
          {held ? (
            <p class="muted">
              The turn stopped here: {pendingWrites.length === 1 ? 'a write is' : `${pendingWrites.length} writes are`} waiting
              below. {wroteBefore ? 'Nothing more has been written.' : 'Nothing has been written.'} The rest of the answer
              arrives after your decision.
            </p>
          ) : null}
          {x.notes.map((n, i) => (
            <Note key={i} tone={n.tone} word={n.word}>
              {n.text}
            </Note>
          ))}
        </div>
        {showRail ? (
          <aside class="rail" aria-label="Entries and cost of this answer">
            {x.tasks ? <Tasks tasks={x.tasks} /> : null}
            {x.tools.length > 0 ? <Entries tools={x.tools} running={x.status === 'running'} /> : null}
            {x.tools.length === 0 && !x.tasks && x.status === 'running' ? (
              <p class="tiny faint">
                <span class="pulse">no entries yet</span>
              </p>
            ) : null}
            {x.account ? <TurnAccount end={x.account} /> : null}
          </aside>
        ) : null}
      </div>
      {x.slips.map((slip) => (
        <SlipView key={slip.key} slip={slip} runId={x.runId} onChange={onSlipChange} onSend={onSend} />
      ))}
    </article>
  );
}

/** The first answer, which stated figures no tool returned, and what became of it. */
function Superseded({ draft, done }: { draft: { prose: string; figures: string[] }; done: boolean }) {
  const list = draft.figures.join(', ');
  return (
    <>
      <Note tone="warn" word="corrected">
        The first answer stated {list}, which {draft.figures.length === 1 ? 'was' : 'were'} not found in your ledger's results, so
        kakeibo asked the model once to correct it. {done ? 'The corrected answer follows.' : 'The corrected answer is on its way.'}
      </Note>
      <details class="superseded">
        <summary class="small muted">The first answer</summary>
        <p class="small muted superseded-text">{draft.prose}</p>
      </details>
    </>
  );
}

/** The model's task list as it last wrote it: done, the one in progress, the ones to do. */
function Tasks({ tasks }: { tasks: TaskItem[] }) {
  const done = tasks.filter((t) => t.status === 'completed').length;
  return (
    <div>
      <h3 class="rail-head">Task list</h3>
      <ul class="tasks" aria-label={`Task list: ${done} of ${tasks.length} done`}>
        {tasks.map((t, i) => (
          <li key={i} class={`task task-${t.status.replace('_', '-')}`}>
            <span class="task-mark" aria-hidden="true">
              {t.status === 'completed' ? '☑' : t.status === 'in_progress' ? '▸' : '☐'}
            </span>
            <span>
              {t.content}
              {t.status === 'in_progress' ? <span class="visually-hidden"> (in progress)</span> : null}
              {t.status === 'completed' ? <span class="visually-hidden"> (done)</span> : null}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Entries({ tools, running }: { tools: ToolEntry[]; running: boolean }) {
  return (
    <div>
      <h3 class="rail-head">Entries</h3>
      <ol class="entries">
        {tools.map((t) => {
          const argText = gloss(t.args);
          // The server's headline figure when the result states one; else the clipped result.
          const headline = t.result?.headline;
          const line = headline
            ? `${headline.label}: ${formatMinor(headline.amount_minor, headline.currency)}`
            : t.result
              ? resultLine(t.result.summary, t.result.isError)
              : null;
          const awaiting = t.tier === 'write' && !t.result;
          if (t.name === SUBAGENT_TOOL) return <SubagentEntry key={t.id} entry={t} running={running} />;
          return (
            <li key={t.id} class="entry">
              <div class="entry-name">
                <span class="mono">{t.name}</span>
                {t.tier === 'write' ? <Mark tone="warn">write</Mark> : null}
              </div>
              {argText ? (
                <div class={`entry-args${awaiting ? ' wrap' : ''}`} title={argText}>
                  {argText}
                </div>
              ) : null}
              {t.result?.decision === 'declined' ? <div class="entry-result">declined: not written</div> : null}
              {t.result?.decision === 'expired' ? <div class="entry-result tone-warn">expired: not written</div> : null}
              {t.result && !t.result.decision && line ? (
                <div class={`entry-result${t.result.isError ? ' tone-danger' : ''}`}>{t.result.isError ? `failed: ${line}` : line}</div>
              ) : null}
              {t.result?.decision === 'allowed' ? <div class="entry-result">written{line ? ` · ${line}` : ''}</div> : null}
              {t.result?.decision === 'failed' ? <div class="entry-result tone-danger">failed, nothing written{line ? `: ${line}` : ''}</div> : null}
              {awaiting && !running ? <div class="entry-result tone-warn">awaiting your decision</div> : null}
              {!t.result && running && !awaiting ? (
                <div class="entry-result">
                  <span class="pulse">running</span>
                </div>
              ) : null}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

/** A `task` call: the subagent's kind and what it was asked, its calls indented beneath, and
 * whether it answered (its answer is in the model's, never shown apart). */
function SubagentEntry({ entry: t, running }: { entry: ToolEntry; running: boolean }) {
  const kind = typeof t.args.subagent_type === 'string' ? t.args.subagent_type : 'general-purpose';
  const what = typeof t.args.description === 'string' ? t.args.description : '';
  const calls = t.sub ?? [];
  return (
    <li class="entry entry-subagent">
      <div class="entry-name">
        <span class="mono">subagent</span>
        <span class="tiny faint">{kind}</span>
      </div>
      {what ? (
        <div class="entry-args" title={what}>
          {what}
        </div>
      ) : null}
      {calls.length > 0 ? (
        <ol class="entries sub-entries" aria-label={`The subagent's ${calls.length === 1 ? 'call' : `${calls.length} calls`}`}>
          {calls.map((c) => (
            <li key={c.id} class="entry">
              <span class="mono">{c.name}</span>{' '}
              <span class={`entry-result${c.outcome && c.outcome !== 'ran' ? ' tone-warn' : ''}`}>
                {c.outcome ? c.outcome.replace(/_/g, ' ') : running ? 'running' : ''}
              </span>
            </li>
          ))}
        </ol>
      ) : null}
      {t.result ? (
        <div class={`entry-result${t.result.isError ? ' tone-danger' : ''}`}>{t.result.isError ? 'stopped before it answered' : 'answered'}</div>
      ) : running ? (
        <div class="entry-result">
          <span class="pulse">working</span>
        </div>
      ) : null}
    </li>
  );
}

function TurnAccount({ end }: { end: TurnEndEvent }) {
  const usage = end.usage;
  return (
    <div class="turn-account">
      <dl>
        <div class="metaline">
          <dt>elapsed</dt>
          <dd class="num">{seconds(end.latency_ms)}</dd>
        </div>
        {usage ? (
          <>
            <div class="metaline">
              <dt>in</dt>
              <dd class="num">
                {count(usage.input_tokens)} <span class="faint">{percentOf(usage.cached_tokens, usage.input_tokens)} cached</span>
              </dd>
            </div>
            <div class="metaline">
              <dt>out</dt>
              <dd class="num">{count(usage.output_tokens)}</dd>
            </div>
          </>
        ) : null}
        {end.cost_usd_est !== undefined ? (
          <div class="metaline">
            <dt>cost</dt>
            <dd class="num">${end.cost_usd_est}</dd>
          </div>
        ) : null}
      </dl>
      <a class="tiny trace-link" href={`/runs/${end.run_id}`}>
        Read the trace →
      </a>
    </div>
  );
}

const OUTCOME_WORDS = {
  allowed: 'Allowed: written.',
  failed: 'Allowed, but it failed when it ran: nothing was written.',
  declined: 'Declined: not written.',
  expired: 'Expired: not written.',
  unknown: 'Sent; the answer stopped before the server said what it did.',
} as const;

function SlipView({ slip, runId, onChange, onSend }: { slip: Slip; runId: string | null; onChange: (s: Slip) => void; onSend: (s: Slip) => void }) {
  const batch = slip.writes.length > 1;
  const heading = useRef<HTMLHeadingElement>(null);
  const pending = slip.status === 'pending';
  useEffect(() => {
    // A write waiting for a person brings its card into view and takes the focus on its heading:
    // never on Allow, so no stray Enter decides. A decision is a button pressed on purpose.
    if (pending) {
      heading.current?.scrollIntoView?.({ block: 'nearest' });
      heading.current?.focus();
    }
  }, [pending]);
  const decided = slip.writes.filter((w) => typeof slip.choices[w.id] === 'boolean').length;
  const headingId = `slip-${slip.suspendedTurnId}-${slip.writes[0]?.id ?? ''}`;
  const closing = verdict(slip);
  return (
    <section class="slip" aria-labelledby={headingId} data-status={slip.status}>
      <div class="slip-head">
        <h3 class="subhead" id={headingId} ref={heading} tabIndex={-1}>
          {slipHeading(slip)}
        </h3>
        <span class="label muted">{batch ? `${slip.writes.length} writes` : slip.writes[0]?.tool}</span>
      </div>
      {slip.writes.map((w) => (
        <div key={w.id} class={`slip-write${batch ? ' batch' : ''}`}>
          {batch ? <div class="label muted slip-tool">{w.tool}</div> : null}
          <p class="slip-summary">{w.summary}</p>
          <details class="slip-args">
            <summary class="small">The exact arguments</summary>
            <dl class="arg-table">
              {argumentRows(w.args).map((row) => (
                <div key={row.key} class="arg-row">
                  <dt class="label faint">{row.key}</dt>
                  <dd class="num">
                    {row.value}
                    {row.raw ? <span class="tiny faint"> {row.raw}</span> : null}
                  </dd>
                </div>
              ))}
            </dl>
          </details>
          {batch && pending ? (
            <div class="btn-row slip-choice" role="group" aria-label={`Decision on: ${w.summary}`}>
              <button
                type="button"
                class="btn compact btn-secondary slip-allow"
                aria-pressed={slip.choices[w.id] === true}
                onClick={() => onChange(choose(slip, w.id, true))}
              >
                Allow
              </button>
              <button
                type="button"
                class="btn compact btn-secondary slip-decline"
                aria-pressed={slip.choices[w.id] === false}
                onClick={() => onChange(choose(slip, w.id, false))}
              >
                Decline
              </button>
              <span class="tiny slip-chosen" aria-hidden="true">
                {slip.choices[w.id] === true ? 'will be written' : slip.choices[w.id] === false ? 'will not be written' : ''}
              </span>
            </div>
          ) : null}
          {batch && !pending && slip.outcomes[w.id] ? (
            <p class={`small ${slip.outcomes[w.id] === 'failed' ? 'tone-danger' : 'muted'}`}>{OUTCOME_WORDS[slip.outcomes[w.id] ?? 'unknown']}</p>
          ) : null}
        </div>
      ))}
      {pending ? (
        <div class="slip-actions">
          {batch ? (
            <div class="btn-row">
              <button type="button" class="btn compact btn-primary" disabled={!ready(slip)} onClick={() => onSend(slip)}>
                Send {slip.writes.length} decisions
              </button>
              <button type="button" class="btn compact btn-secondary" onClick={() => onChange(chooseAll(slip, true))}>
                Allow all
              </button>
              <button type="button" class="btn compact btn-secondary" onClick={() => onChange(chooseAll(slip, false))}>
                Decline all
              </button>
              <span class="tiny faint" aria-live="polite">
                {decided} of {slip.writes.length} decided
              </span>
            </div>
          ) : (
            <div class="btn-row">
              <button type="button" class="btn compact btn-primary" onClick={() => onSend(chooseAll(slip, true))}>
                Allow
              </button>
              <button type="button" class="btn compact btn-secondary" onClick={() => onSend(chooseAll(slip, false))}>
                Decline
              </button>
            </div>
          )}
          <p class="tiny faint slip-hint">The turn is paused until you decide.</p>
        </div>
      ) : null}
      {closing ? (
        <p class="small muted slip-verdict" role="status">
          {closing}
          {slip.writes.some((w) => slip.outcomes[w.id] === 'unknown') && runId ? (
            <>
              {' '}
              <a href={`/runs/${runId}`}>Read the trace →</a>
            </>
          ) : null}
        </p>
      ) : null}
    </section>
  );
}
