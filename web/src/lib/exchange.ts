// One question and everything the turn answered, built from the stream's events. Pure, so the
// page's behaviour on every event can be tested without a browser.

import type {
  ConfirmRequestEvent,
  ErrorEvent,
  CorrectingEvent,
  FiguresEvent,
  Headline,
  PendingTurn,
  StoredMessage,
  Tier,
  TokenEvent,
  ToolCallEvent,
  SubagentEvent,
  ToolResultEvent,
  TurnEndEvent,
} from '../api/types';
import { accepted, groupBySuspendedTurn, refused, type Slip, type WriteOutcome } from './confirm';
import type { LegOutcome } from './leg';
import type { SseEvent } from './sse';
import type { Tone } from '../components/mark';

export interface ToolEntry {
  id: string;
  name: string;
  args: Record<string, unknown>;
  tier: Tier | null;
  result?: { summary: string; isError: boolean; decision?: WriteOutcome; headline?: Headline };
  /** For a `task` call: what its subagent called, in order, and how each call ended. */
  sub?: SubCall[];
}

/** One call a subagent made (`outcome` once it ended: `ran`, `failed`, `declined`, …). */
export interface SubCall {
  id: string;
  name: string;
  outcome?: string;
}

/** The tool that hands work to a subagent (on when the operator sets `SUBAGENTS=on`). */
export const SUBAGENT_TOOL = 'task';

/** The subagent's calls a stored `task` result names (`tool_calls` of its JSON, inside the
 * `<tool_data>` fence); none when the result is not one the loop wrote. */
export function subCallsOf(content: string): SubCall[] {
  const body = content.trim().replace(/^<tool_data>/, '').replace(/<\/tool_data>$/, '');
  try {
    const parsed = JSON.parse(body) as { tool_calls?: unknown };
    if (!Array.isArray(parsed.tool_calls)) return [];
    return parsed.tool_calls
      .filter((c): c is { name: string; outcome?: unknown } => typeof (c as { name?: unknown })?.name === 'string')
      .slice(0, 50)
      .map((c, i) => ({ id: `s${i}`, name: c.name, ...(typeof c.outcome === 'string' ? { outcome: c.outcome } : {}) }));
  } catch {
    return [];
  }
}

/** `x` with a subagent's event applied to the `task` entry `callId`: a call added, or ended. */
function withSubEvent(x: Exchange, callId: string, inner: { type?: unknown; id?: unknown; name?: unknown; outcome?: unknown }): Exchange {
  if (typeof inner?.id !== 'string' || typeof inner.name !== 'string') return x;
  const { id, name } = inner;
  const tools = x.tools.map((t) => {
    if (t.id !== callId) return t;
    const sub = t.sub ?? [];
    if (inner.type === 'tool_call') return sub.some((c) => c.id === id) ? t : { ...t, sub: [...sub, { id, name }] };
    if (inner.type === 'tool_result' && typeof inner.outcome === 'string') {
      const outcome = inner.outcome;
      const known = sub.some((c) => c.id === id);
      return { ...t, sub: known ? sub.map((c) => (c.id === id ? { ...c, outcome } : c)) : [...sub, { id, name, outcome }] };
    }
    return t;
  });
  return { ...x, tools };
}

/** One item of the model's task list (`todo_write`, on when the operator sets `TASK_LIST=on`). */
export interface TaskItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}

/** The tool that keeps the model's task list: its calls show as the list, never as entries. */
export const TASK_TOOL = 'todo_write';

/** The list a `todo_write` call's input holds, when the tool takes it (at most one item in
 * progress, each with words and a known status); `null` for one it refuses. */
export function tasksOf(args: Record<string, unknown> | undefined): TaskItem[] | null {
  const todos = args?.todos;
  if (!Array.isArray(todos) || todos.length > 30) return null;
  const items: TaskItem[] = [];
  for (const t of todos) {
    const content = (t as { content?: unknown })?.content;
    const status = (t as { status?: unknown })?.status;
    if (typeof content !== 'string' || content.trim() === '' || content.length > 200) return null;
    if (status !== 'pending' && status !== 'in_progress' && status !== 'completed') return null;
    items.push({ content, status });
  }
  return items.filter((t) => t.status === 'in_progress').length > 1 ? null : items;
}

export interface ExchangeNote {
  tone: Tone;
  word: string;
  text: string;
}

export type ExchangeStatus = 'running' | 'waiting' | 'done' | 'failed' | 'stopped';

export interface Exchange {
  key: string;
  question: string;
  prose: string;
  tools: ToolEntry[];
  /** The model's task list as its latest `todo_write` left it. */
  tasks?: TaskItem[];
  slips: Slip[];
  notes: ExchangeNote[];
  account: TurnEndEvent | null;
  /** The run this exchange's turn is, once the stream named it (for "Read the trace"). */
  runId: string | null;
  /** The answer's figures, checked against the turn's tool results (only when it states any). */
  figures?: FiguresEvent;
  /** An answer the model was asked to correct (`FIGURES=retry`): what it said, and the figures
   * in it that no tool returned. The corrected answer is `prose`. */
  superseded?: { prose: string; figures: string[] };
  status: ExchangeStatus;
  /** Read back from a stored conversation: no live turn behind it. */
  recorded?: boolean;
  /** A tool ran or a write was asked since the last text: the next text is a new part of the
   * answer (another model step), set apart as a stored conversation reads back. */
  newPart?: boolean;
}

/** `prose` with `delta` after it; a new part starts a paragraph of its own. */
function appended(prose: string, delta: string, newPart: boolean): string {
  if (newPart && prose !== '' && !prose.endsWith('\n')) return `${prose}\n\n${delta}`;
  return prose + delta;
}

let counter = 0;

export function newExchange(question: string): Exchange {
  counter += 1;
  return { key: `x${counter}-${Date.now()}`, question, prose: '', tools: [], slips: [], notes: [], account: null, runId: null, status: 'running' };
}

/** What the stream said, applied to the exchange. Unknown events are ignored. */
export function applyEvent(x: Exchange, event: SseEvent): Exchange {
  switch (event.event) {
    case 'token': {
      const { delta } = event.data as TokenEvent;
      return typeof delta === 'string' ? { ...x, prose: appended(x.prose, delta, Boolean(x.newPart)), newPart: false } : x;
    }
    case 'tool_call': {
      const call = event.data as ToolCallEvent;
      if (x.tools.some((t) => t.id === call.id)) return x;
      const tasks = call.name === TASK_TOOL ? tasksOf(call.args) : null;
      if (tasks) return { ...x, newPart: true, tasks };
      return { ...x, newPart: true, tools: [...x.tools, { id: call.id, name: call.name, args: call.args ?? {}, tier: call.tier ?? null }] };
    }
    case 'tool_result': {
      const r = event.data as ToolResultEvent;
      // An allowed write whose tool failed changed nothing: it is "failed", never "written".
      const isError = r.outcome === 'failed';
      const decision: WriteOutcome | undefined = r.decision === 'allowed' && isError ? 'failed' : (r.decision ?? undefined);
      const result = { summary: r.summary ?? '', isError, ...(decision ? { decision } : {}), ...(r.headline ? { headline: r.headline } : {}) };
      const known = x.tools.some((t) => t.id === r.id);
      // A task list the tool took was shown as the list; only one it refused is an entry.
      if (!known && r.name === TASK_TOOL && !isError) return { ...x, newPart: true };
      const tools = known
        ? x.tools.map((t) => (t.id === r.id ? { ...t, result } : t))
        : [...x.tools, { id: r.id, name: r.name, args: {}, tier: r.decision ? ('write' as const) : null, result }];
      return { ...x, newPart: true, tools };
    }
    case 'confirm_request': {
      const c = event.data as ConfirmRequestEvent;
      const write = { id: c.id, tool: c.tool, args: c.args ?? {}, summary: c.summary, suspendedTurnId: c.suspended_turn_id };
      // Writes join the open slip of their suspended turn. A resumed turn that asks again keeps its
      // id, but the earlier slip is settled by then: the new writes make a slip of their own.
      const open = x.slips.findIndex((s) => s.suspendedTurnId === write.suspendedTurnId && s.status === 'pending');
      const slip = x.slips[open];
      if (slip === undefined) return { ...x, slips: [...x.slips, ...groupBySuspendedTurn([write])] };
      if (slip.writes.some((w) => w.id === write.id)) return x;
      return { ...x, slips: x.slips.map((s, i) => (i === open ? { ...s, writes: [...s.writes, write] } : s)) };
    }
    case 'correcting': {
      const { figures } = event.data as CorrectingEvent;
      if (!Array.isArray(figures)) return x;
      return { ...x, superseded: { prose: x.prose, figures }, prose: '', newPart: false };
    }
    case 'figures': {
      const check = event.data as FiguresEvent;
      return Array.isArray(check.figures) ? { ...x, figures: check } : x;
    }
    case 'turn_end': {
      const end = event.data as TurnEndEvent;
      if (end.status === 'suspended') return { ...x, runId: end.run_id ?? x.runId, status: 'waiting' };
      const notes = [...x.notes];
      const word =
        end.stop === 'daily_cap'
          ? DAILY_CAP
          : (end.stop === 'provider_error' || end.stop === 'budget_unavailable') && end.message
            ? { tone: 'danger' as const, word: 'failed' as const, text: `${end.message} Nothing was lost; send it again.` }
            : statusNote(end.status);
      if (word) notes.push(word);
      return { ...x, account: end, runId: end.run_id ?? x.runId, status: end.status === 'ok' ? 'done' : 'failed', notes };
    }
    case 'subagent': {
      const { call_id: callId, event: inner } = event.data as SubagentEvent;
      return typeof callId === 'string' ? withSubEvent(x, callId, inner ?? {}) : x;
    }
    case 'error': {
      const { message } = event.data as ErrorEvent;
      return { ...x, status: 'failed', notes: [...x.notes, { tone: 'danger', word: 'failed', text: message || 'The turn failed.' }] };
    }
    default:
      return x;
  }
}

const DAILY_CAP: ExchangeNote = {
  tone: 'warn',
  word: 'note',
  text: "The site has reached today's model budget, so the turn stopped here; what it found so far is kept. It renews at midnight UTC.",
};

function statusNote(status: string): ExchangeNote | null {
  switch (status) {
    case 'ok':
      return null;
    case 'blocked':
      return { tone: 'warn', word: 'note', text: 'The model provider blocked this answer, so it stopped here.' };
    case 'stuck':
      return { tone: 'warn', word: 'note', text: 'The turn stopped because it was going round in circles.' };
    case 'max_tokens':
    case 'length':
      return { tone: 'warn', word: 'note', text: 'The answer reached its length limit and was cut short.' };
    case 'iteration_limit':
      return { tone: 'warn', word: 'note', text: 'The turn reached its limit of model calls.' };
    case 'aborted':
      return { tone: 'warn', word: 'note', text: 'The turn was stopped before it finished.' };
    default:
      return { tone: 'danger', word: 'failed', text: `The turn ended with status "${status}".` };
  }
}

/**
 * After a confirm's stream: the slip states what the server said of each write. When the leg
 * failed before the server said anything of them, the choices come back to the person (a failed
 * leg keeps its state and may be answered again); otherwise a write it said nothing of is unknown.
 */
export function settleSlip(x: Exchange, slipKey: string, leg: LegOutcome): Exchange {
  const reported: Record<string, WriteOutcome> = {};
  for (const t of x.tools) if (t.result?.decision) reported[t.id] = t.result.decision;
  return {
    ...x,
    slips: x.slips.map((s) => {
      if (s.key !== slipKey || s.status !== 'sending') return s;
      const heard = s.writes.some((w) => reported[w.id] !== undefined);
      return leg === 'error' && !heard ? refused(s) : accepted(s, reported);
    }),
  };
}

export function updateSlip(x: Exchange, slipKey: string, change: (slip: Slip) => Slip): Exchange {
  return { ...x, slips: x.slips.map((s) => (s.key === slipKey ? change(s) : s)) };
}

const DECLINED_PREFIX = 'The user declined this call';
const EXPIRED_PREFIX = 'The confirmation for this call expired';
/** The loop's own note asking the model to correct an answer's figures (`FIGURES=retry`), as
 * crates/core/src/turn/mod.rs writes it: not a question of the person's. */
const FIGURE_CHECK_PREFIX = "[kakeibo's figure check: your answer states ";

/** The text the person typed, without the memories the agent attaches to it. */
function personText(message: StoredMessage): string {
  const first = message.content.find((b) => b.type === 'text');
  return first && first.type === 'text' ? first.text : '';
}

/** A stored conversation as exchanges to read back (no live turn behind them). */
export function exchangesFromHistory(messages: StoredMessage[]): Exchange[] {
  const out: Exchange[] = [];
  let current: Exchange | null = null;
  for (const message of messages) {
    if (message.role === 'user') {
      const results = message.content.filter((b) => b.type === 'tool_result');
      const said = personText(message);
      if (results.length === 0 && current && said.startsWith(FIGURE_CHECK_PREFIX)) {
        // The answer so far was corrected: what follows replaces it, as it did on the stream.
        const listed = said.slice(FIGURE_CHECK_PREFIX.length).split(' that no tool')[0] ?? '';
        current.superseded = { prose: current.prose, figures: listed.split(', ').filter(Boolean) };
        current.prose = '';
        continue;
      }
      if (results.length === 0) {
        current = { ...newExchange(said), status: 'done', recorded: true };
        out.push(current);
        continue;
      }
      if (!current) continue;
      for (const r of results) {
        if (r.type !== 'tool_result') continue;
        const decision: WriteOutcome | undefined = r.content.startsWith(DECLINED_PREFIX)
          ? 'declined'
          : r.content.startsWith(EXPIRED_PREFIX)
            ? 'expired'
            : undefined;
        const entry = current.tools.find((t) => t.id === r.tool_use_id);
        const result = { summary: r.content.slice(0, 200), isError: Boolean(r.is_error), ...(decision ? { decision } : {}) };
        if (entry) entry.result = result;
        if (entry?.name === SUBAGENT_TOOL) entry.sub = subCallsOf(r.content);
      }
      continue;
    }
    if (!current) continue;
    for (const block of message.content) {
      if (block.type === 'text') current.prose += (current.prose && !current.prose.endsWith('\n') ? '\n\n' : '') + block.text;
      if (block.type !== 'tool_use') continue;
      const tasks = block.name === TASK_TOOL ? tasksOf(block.input) : null;
      if (tasks) current.tasks = tasks;
      else current.tools.push({ id: block.id, name: block.name, args: block.input ?? {}, tier: null });
    }
  }
  return out;
}

/**
 * A turn waiting for a decision, read back (after a reload or on reopening its conversation): its
 * question and what it said so far, with the card of its writes, live again — answering it goes on
 * with the turn exactly as the card the stream built would. `null` when it holds no question.
 */
export function exchangeFromPending(turn: PendingTurn): Exchange | null {
  const read = exchangesFromHistory(turn.messages);
  const x = read[0];
  if (x === undefined) return null;
  // Later "exchanges" would be text the turn added itself: they belong to this one.
  for (const later of read.slice(1)) {
    x.tools.push(...later.tools);
    if (later.prose) x.prose += (x.prose ? '\n\n' : '') + later.prose;
  }
  const writes = turn.writes.map((w) => ({ ...w, suspendedTurnId: turn.suspended_turn_id }));
  const pendingIds = new Set(writes.map((w) => w.id));
  const tools = x.tools.map((t) => (pendingIds.has(t.id) ? { ...t, tier: 'write' as const } : t));
  return { ...x, tools, recorded: false, status: 'waiting', runId: turn.run_id, slips: groupBySuspendedTurn(writes), newPart: true };
}
