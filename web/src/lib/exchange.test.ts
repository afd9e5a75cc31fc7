import { describe, expect, it } from 'vitest';
import { applyEvent, exchangeFromPending, exchangesFromHistory, newExchange, settleSlip, subCallsOf, tasksOf, updateSlip, type Exchange } from './exchange';
import { chooseAll, send } from './confirm';
import type { StoredMessage } from '../api/types';

const play = (x: Exchange, events: [string, unknown][]) => events.reduce((e, [event, data]) => applyEvent(e, { event, data }), x);

describe('an exchange built from the stream', () => {
  it('streams prose, posts tool calls in the margin and attaches their results', () => {
    const x = play(newExchange('Groceries in March?'), [
      ['tool_call', { id: 'c1', name: 'get_spend_report', args: { period: '2025-03' }, tier: 'read' }],
      ['tool_result', { id: 'c1', name: 'get_spend_report', summary: '{"groups":[]}', outcome: 'ran' }],
      ['token', { delta: 'You spent ' }],
      ['token', { delta: '₹23,350.00.' }],
      ['turn_end', { run_id: 'r', conversation_id: 'c', status: 'ok', usage: { input_tokens: 10, output_tokens: 2, cached_tokens: 0, thought_tokens: 0 } }],
    ]);
    expect(x.prose).toBe('You spent ₹23,350.00.');
    expect(x.tools).toHaveLength(1);
    expect(x.tools[0]?.result?.summary).toBe('{"groups":[]}');
    expect(x.status).toBe('done');
    expect(x.account?.run_id).toBe('r');
  });

  it('sets the text after a tool or a decision apart, as a stored conversation reads back', () => {
    const x = play(newExchange('Set a budget'), [
      ['token', { delta: "I'll set ₹5,000." }],
      ['tool_call', { id: 'c1', name: 'set_budget', args: {}, tier: 'write' }],
      ['tool_result', { id: 'c1', name: 'set_budget', summary: '{}', outcome: 'ran', decision: 'allowed' }],
      ['token', { delta: 'Here is what ' }],
      ['token', { delta: 'happened.' }],
    ]);
    expect(x.prose).toBe("I'll set ₹5,000.\n\nHere is what happened.");
  });

  it("says the site's daily budget stopped a turn, with what it read kept", () => {
    const x = play(newExchange('Groceries in March?'), [
      ['tool_call', { id: 'c1', name: 'get_spend_report', args: { period: '2025-03' }, tier: 'read' }],
      ['tool_result', { id: 'c1', name: 'get_spend_report', summary: '{"groups":[]}', outcome: 'ran' }],
      ['turn_end', { run_id: 'r', conversation_id: 'c', status: 'aborted', stop: 'daily_cap' }],
    ]);
    expect(x.status).toBe('failed');
    expect(x.tools).toHaveLength(1);
    expect(x.notes.map((n) => n.text).join(' ')).toMatch(/today's model budget/);
    expect(x.notes.map((n) => n.text).join(' ')).not.toMatch(/stopped before it finished/);
  });

  it("shows the model's failure in the turn's own words", () => {
    const x = play(newExchange('Groceries in March?'), [
      ['turn_end', { run_id: 'r', conversation_id: 'c', status: 'error', stop: 'provider_error', message: 'The model could not answer: timed out.' }],
    ]);
    expect(x.status).toBe('failed');
    expect(x.notes.map((n) => n.text).join(' ')).toMatch(/The model could not answer: timed out\. Nothing was lost/);
  });

  it('says when the budget could not be checked, in the turn\'s own words', () => {
    const message = "Today's model budget could not be checked (connection refused); nothing was sent to the model.";
    const x = play(newExchange('Groceries in March?'), [
      ['turn_end', { run_id: 'r', conversation_id: 'c', status: 'error', stop: 'budget_unavailable', message }],
    ]);
    expect(x.status).toBe('failed');
    expect(x.notes.map((n) => n.text).join(' ')).toMatch(/could not be checked \(connection refused\); nothing was sent/);
  });

  it('holds a batch of writes on one slip and settles it from the confirm stream', () => {
    let x = play(newExchange('Budgets for dining and transport'), [
      ['tool_call', { id: 'w1', name: 'set_budget', args: {}, tier: 'write' }],
      ['tool_call', { id: 'w2', name: 'set_budget', args: {}, tier: 'write' }],
      ['confirm_request', { id: 'w1', tool: 'set_budget', args: {}, summary: 'a', tier: 'write', suspended_turn_id: 's' }],
      ['confirm_request', { id: 'w2', tool: 'set_budget', args: {}, summary: 'b', tier: 'write', suspended_turn_id: 's' }],
      ['turn_end', { run_id: 'r', conversation_id: 'c', status: 'suspended', suspended_turn_id: 's' }],
    ]);
    expect(x.status).toBe('waiting');
    expect(x.slips).toHaveLength(1);
    expect(x.slips[0]?.writes).toHaveLength(2);
    const key = x.slips[0]!.key;
    x = updateSlip(x, key, (s) => send(chooseAll(s, true))!.slip);
    x = play(x, [
      ['tool_result', { id: 'w1', name: 'set_budget', summary: '{"id":"b1"}', outcome: 'ran', decision: 'allowed' }],
      ['tool_result', { id: 'w2', name: 'set_budget', summary: 'The user declined', outcome: 'declined', decision: 'declined' }],
      ['token', { delta: 'Done.' }],
      ['turn_end', { run_id: 'r', conversation_id: 'c', status: 'ok' }],
    ]);
    x = settleSlip(x, key, 'complete');
    expect(x.slips[0]?.status).toBe('done');
    expect(x.slips[0]?.outcomes).toEqual({ w1: 'allowed', w2: 'declined' });
    expect(x.tools.map((t) => t.result?.decision)).toEqual(['allowed', 'declined']);
  });

  it('gives a resumed turn that asks again a slip of its own, decided apart from the first', () => {
    let x = play(newExchange('q'), [
      ['confirm_request', { id: 'w1', tool: 'set_budget', args: {}, summary: 'a', tier: 'write', suspended_turn_id: 's' }],
    ]);
    const first = x.slips[0]!.key;
    x = updateSlip(x, first, (s) => send(chooseAll(s, true))!.slip);
    x = play(x, [
      ['tool_result', { id: 'w1', name: 'set_budget', summary: '{}', outcome: 'ran', decision: 'allowed' }],
      ['confirm_request', { id: 'w9', tool: 'memory_save', args: {}, summary: 'b', tier: 'write', suspended_turn_id: 's' }],
      ['turn_end', { run_id: 'r', conversation_id: 'c', status: 'suspended', suspended_turn_id: 's' }],
    ]);
    x = settleSlip(x, first, 'complete');
    const second = x.slips[1]!.key;
    expect(second).not.toBe(first);
    // Declining the second card leaves the first as the server settled it.
    x = updateSlip(x, second, (s) => send(chooseAll(s, false))!.slip);
    x = play(x, [['tool_result', { id: 'w9', name: 'memory_save', summary: 'declined', outcome: 'declined', decision: 'declined' }]]);
    x = settleSlip(x, second, 'complete');
    expect(x.slips.map((s) => [s.status, s.writes.map((w) => w.id), s.outcomes])).toEqual([
      ['done', ['w1'], { w1: 'allowed' }],
      ['done', ['w9'], { w9: 'declined' }],
    ]);
  });

  it('never states an outcome the server did not report', () => {
    const base = play(newExchange('q'), [
      ['confirm_request', { id: 'w1', tool: 'set_budget', args: {}, summary: 'a', tier: 'write', suspended_turn_id: 's' }],
    ]);
    const key = base.slips[0]!.key;
    const sent = updateSlip(base, key, (s) => send(chooseAll(s, true))!.slip);
    // The leg failed before the server said anything of the write: the card comes back.
    const failed = settleSlip(play(sent, [['error', { message: 'try again' }]]), key, 'error');
    expect(failed.slips[0]?.status).toBe('pending');
    // The stream broke off before the write's result: unknown, not "allowed".
    const cut = settleSlip(sent, key, 'cut');
    expect(cut.slips[0]?.outcomes).toEqual({ w1: 'unknown' });
    // An allowed write whose tool failed is a failure, not a write.
    const broke = settleSlip(play(sent, [['tool_result', { id: 'w1', name: 'set_budget', summary: 'no such category', outcome: 'failed', decision: 'allowed' }]]), key, 'complete');
    expect(broke.slips[0]?.outcomes).toEqual({ w1: 'failed' });
    expect(broke.tools[0]?.result?.decision).toBe('failed');
  });

  it('shows an error event as a note, never as prose', () => {
    const x = play(newExchange('q'), [['error', { message: 'the turn could not be completed' }]]);
    expect(x.prose).toBe('');
    expect(x.notes).toEqual([{ tone: 'danger', word: 'failed', text: 'the turn could not be completed' }]);
    expect(x.status).toBe('failed');
  });
});

describe('a stored conversation read back', () => {
  it('makes one exchange per question with its calls, results and answer', () => {
    const xs = exchangesFromHistory([
      { role: 'user', content: [{ type: 'text', text: 'Set a budget' }, { type: 'text', text: '<user_memory>\n- x\n</user_memory>' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Setting it.' }, { type: 'tool_use', id: 't1', name: 'set_budget', input: { amount_minor: 5 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', name: 'set_budget', content: 'The user declined this call, so…' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Nothing changed.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ]);
    expect(xs.map((x) => x.question)).toEqual(['Set a budget', 'Thanks']);
    expect(xs[0]?.prose).toBe('Setting it.\n\nNothing changed.');
    expect(xs[0]?.tools[0]?.result?.decision).toBe('declined');
  });
});

describe('a turn waiting for a decision, read back', () => {
  const turn = {
    suspended_turn_id: 's1',
    run_id: 'r1',
    expires_at: '2026-12-05T12:00:00Z',
    messages: [
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'Budgets for Dining and Transport' }] },
      {
        role: 'assistant' as const,
        content: [
          { type: 'text' as const, text: 'I will set two budgets.' },
          { type: 'tool_use' as const, id: 'w1', name: 'set_budget', input: { category: 'Dining' } },
          { type: 'tool_use' as const, id: 'w2', name: 'set_budget', input: { category: 'Transport' } },
        ],
      },
    ],
    writes: [
      { id: 'w1', tool: 'set_budget', args: { category: 'Dining' }, summary: 'Dining at ₹5,000.00' },
      { id: 'w2', tool: 'set_budget', args: { category: 'Transport' }, summary: 'Transport at ₹3,000.00' },
    ],
  };

  it('is live again: its question, what it said, and one card with every write', () => {
    const x = exchangeFromPending(turn);
    expect(x).not.toBeNull();
    if (!x) return;
    expect(x.question).toBe('Budgets for Dining and Transport');
    expect(x.prose).toBe('I will set two budgets.');
    expect(x.status).toBe('waiting');
    expect(x.recorded).toBe(false);
    expect(x.runId).toBe('r1');
    expect(x.slips).toHaveLength(1);
    expect(x.slips[0]?.status).toBe('pending');
    expect(x.slips[0]?.suspendedTurnId).toBe('s1');
    expect(x.slips[0]?.writes.map((w) => w.summary)).toEqual(['Dining at ₹5,000.00', 'Transport at ₹3,000.00']);
    expect(x.tools.every((t) => t.tier === 'write')).toBe(true);
  });

  it('sets the answer after the decision apart from what came before', () => {
    const x = exchangeFromPending(turn);
    if (!x) throw new Error('no exchange');
    const after = applyEvent(x, { event: 'token', data: { delta: 'Done.' } });
    expect(after.prose).toBe('I will set two budgets.\n\nDone.');
  });

  it('is nothing without a question', () => {
    expect(exchangeFromPending({ ...turn, messages: [] })).toBeNull();
  });

  it("reads a corrected answer back as one exchange: the figure check is kakeibo's, not the person's", () => {
    const [x, ...rest] = exchangesFromHistory([
      { role: 'user', content: [{ type: 'text', text: 'How much in June?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'You spent ₹1,40,619.00 and ₹99,999.99 on Dining.' }] },
      {
        role: 'user',
        content: [{ type: 'text', text: "[kakeibo's figure check: your answer states ₹99,999.99 that no tool result of this turn holds. Write it again.]" }],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'You spent ₹1,40,619.00.' }] },
    ] as StoredMessage[]);
    expect(rest).toEqual([]);
    expect(x?.question).toBe('How much in June?');
    expect(x?.prose).toBe('You spent ₹1,40,619.00.');
    expect(x?.superseded).toEqual({ prose: 'You spent ₹1,40,619.00 and ₹99,999.99 on Dining.', figures: ['₹99,999.99'] });
  });
});

describe("the model's task list", () => {
  const list = (statuses: string[]) => ({ todos: statuses.map((status, i) => ({ content: `step ${i + 1}`, status })) });

  it('shows the latest list the tool takes in the margin, never as an entry', () => {
    const x = play(newExchange('Review my subscriptions'), [
      ['tool_call', { id: 't1', name: 'todo_write', args: list(['in_progress', 'pending']), tier: 'read' }],
      ['tool_result', { id: 't1', name: 'todo_write', summary: '{}', outcome: 'ran' }],
      ['tool_call', { id: 'c1', name: 'detect_recurring', args: {}, tier: 'read' }],
      ['tool_result', { id: 'c1', name: 'detect_recurring', summary: '{}', outcome: 'ran' }],
      ['tool_call', { id: 't2', name: 'todo_write', args: list(['completed', 'in_progress']), tier: 'read' }],
      ['tool_result', { id: 't2', name: 'todo_write', summary: '{}', outcome: 'ran' }],
      // Refused by the tool (two in progress): an entry that failed, and the list stays as it was.
      ['tool_call', { id: 't3', name: 'todo_write', args: list(['in_progress', 'in_progress']), tier: 'read' }],
      ['tool_result', { id: 't3', name: 'todo_write', summary: 'two in progress', outcome: 'failed' }],
    ]);
    expect(x.tasks).toEqual([
      { content: 'step 1', status: 'completed' },
      { content: 'step 2', status: 'in_progress' },
    ]);
    expect(x.tools.map((t) => t.name)).toEqual(['detect_recurring', 'todo_write']);
    expect(x.tools[1]?.result?.isError).toBe(true);
  });

  it('reads only lists the tool would take', () => {
    expect(tasksOf(list(['pending', 'completed']))).toHaveLength(2);
    expect(tasksOf(list(['in_progress', 'in_progress']))).toBeNull();
    expect(tasksOf(list(['doing']))).toBeNull();
    expect(tasksOf({ todos: [{ content: ' ', status: 'pending' }] })).toBeNull();
    expect(tasksOf({ todos: 'x' })).toBeNull();
    expect(tasksOf(undefined)).toBeNull();
  });

  it('reads a stored list back as the list', () => {
    const xs = exchangesFromHistory([
      { role: 'user', content: [{ type: 'text', text: 'Review my subscriptions' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'todo_write', input: list(['completed']) }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', name: 'todo_write', content: '<tool_data>{}</tool_data>' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    ]);
    expect(xs[0]?.tasks).toEqual([{ content: 'step 1', status: 'completed' }]);
    expect(xs[0]?.tools).toEqual([]);
  });
});

describe('a subagent', () => {
  const task = { description: 'Review the subscriptions', prompt: 'List them.', subagent_type: 'general-purpose' };
  const stored = '<tool_data>{"subagent":"general-purpose","status":"ok","answer":"Two.","tool_calls":[{"name":"detect_recurring","outcome":"ran"},{"name":"set_budget","outcome":"declined"}]}</tool_data>';

  it('lists what it calls under its task as the stream says, and whether it answered', () => {
    const x = play(newExchange('Review my subscriptions'), [
      ['tool_call', { id: 'k1', name: 'task', args: task, tier: 'read' }],
      ['subagent', { call_id: 'k1', event: { type: 'tool_call', id: 'c1', name: 'detect_recurring', args: {}, tier: 'read' } }],
      ['subagent', { call_id: 'k1', event: { type: 'tool_result', id: 'c1', name: 'detect_recurring', summary: '{}', outcome: 'ran' } }],
      ['subagent', { call_id: 'k1', event: { type: 'tool_call', id: 'c2', name: 'set_budget', args: {}, tier: 'write' } }],
      // Another task's events, or one that is not a call, change nothing here.
      ['subagent', { call_id: 'k9', event: { type: 'tool_call', id: 'c3', name: 'get_balances', args: {}, tier: 'read' } }],
      ['subagent', { call_id: 'k1', event: { type: 'token', delta: 'x' } }],
      ['tool_result', { id: 'k1', name: 'task', summary: stored.slice(0, 200), outcome: 'ran' }],
    ]);
    expect(x.tools.map((t) => t.name)).toEqual(['task']);
    expect(x.tools[0]?.sub).toEqual([
      { id: 'c1', name: 'detect_recurring', outcome: 'ran' },
      { id: 'c2', name: 'set_budget' },
    ]);
    expect(x.tools[0]?.result?.isError).toBe(false);
    expect(x.prose).toBe('');
  });

  it('reads its calls back from the stored result', () => {
    const [x] = exchangesFromHistory([
      { role: 'user', content: [{ type: 'text', text: 'Review my subscriptions' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'k1', name: 'task', input: task }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'k1', name: 'task', content: stored }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    ] as StoredMessage[]);
    expect(x?.tools[0]?.sub?.map((c) => `${c.name}:${c.outcome}`)).toEqual(['detect_recurring:ran', 'set_budget:declined']);
    expect(subCallsOf('not json')).toEqual([]);
    expect(subCallsOf('<tool_data>{"tool_calls":[{"nom":1}]}</tool_data>')).toEqual([]);
  });
});
