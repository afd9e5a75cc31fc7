import { describe, expect, it } from 'vitest';
import {
  accepted,
  choose,
  chooseAll,
  decisionsFor,
  expired,
  groupBySuspendedTurn,
  ready,
  refused,
  send,
  slipHeading,
  verdict,
  type PendingWrite,
} from './confirm';

const write = (id: string, suspendedTurnId = 's1', tool = 'set_budget'): PendingWrite => ({
  id,
  tool,
  args: {},
  summary: `write ${id}`,
  suspendedTurnId,
});

describe('groupBySuspendedTurn', () => {
  it('puts the writes of one suspended turn on one slip, in order', () => {
    const slips = groupBySuspendedTurn([write('a'), write('b')]);
    expect(slips).toHaveLength(1);
    expect(slips[0]?.writes.map((w) => w.id)).toEqual(['a', 'b']);
  });

  it('keeps later turns apart and regroups interleaved writes in first-seen order', () => {
    const slips = groupBySuspendedTurn([write('a', 's1'), write('x', 's2'), write('b', 's1'), write('a', 's1')]);
    expect(slips.map((s) => s.suspendedTurnId)).toEqual(['s1', 's2']);
    expect(slips[0]?.writes.map((w) => w.id)).toEqual(['a', 'b']);
    expect(slips[1]?.writes.map((w) => w.id)).toEqual(['x']);
  });

  it('makes no slip of no writes', () => {
    expect(groupBySuspendedTurn([])).toEqual([]);
  });
});

describe('deciding a slip', () => {
  const batch = () => groupBySuspendedTurn([write('a'), write('b')])[0]!;

  it('has a heading that follows each decision', () => {
    expect(slipHeading(batch())).toBe('These 2 writes will change your ledger');
    expect(slipHeading(choose(batch(), 'a', false))).toBe('1 of these 2 writes will change your ledger');
    expect(slipHeading(chooseAll(batch(), false))).toBe('None of these writes will change your ledger');
    expect(slipHeading(expired(batch()))).toBe('Nothing was changed');
  });

  it('holds one decision per write; choosing again replaces, never adds', () => {
    let slip = choose(batch(), 'a', true);
    slip = choose(slip, 'a', false);
    slip = choose(slip, 'a', true);
    expect(ready(slip)).toBe(false);
    slip = choose(slip, 'b', false);
    expect(ready(slip)).toBe(true);
    expect(decisionsFor(slip)).toEqual([
      { id: 'a', allowed: true },
      { id: 'b', allowed: false },
    ]);
  });

  it('ignores a choice for a write that is not on the slip', () => {
    const slip = choose(batch(), 'zzz', true);
    expect(slip.choices).toEqual({});
  });

  it('answers every write of the batch when all are allowed or all declined', () => {
    expect(decisionsFor(chooseAll(batch(), true))).toEqual([
      { id: 'a', allowed: true },
      { id: 'b', allowed: true },
    ]);
    expect(decisionsFor(chooseAll(batch(), false))).toEqual([
      { id: 'a', allowed: false },
      { id: 'b', allowed: false },
    ]);
  });

  it('sends a batch once: not before every write is decided, and never a second time', () => {
    const half = choose(batch(), 'a', true);
    expect(send(half), 'one write still undecided').toBeNull();
    const whole = choose(half, 'b', false);
    const first = send(whole);
    expect(first?.decisions).toHaveLength(2);
    expect(first?.slip.status).toBe('sending');
    expect(send(first!.slip), 'a second send of the same slip').toBeNull();
    expect(choose(first!.slip, 'a', false).choices.a, 'no change of mind while sending').toBe(true);
  });

  it('comes back to the person when the server refuses, choices kept', () => {
    const sending = send(chooseAll(batch(), true))!.slip;
    const back = refused(sending);
    expect(back.status).toBe('pending');
    expect(back.choices).toEqual({ a: true, b: true });
    expect(send(back), 'and can be sent again').not.toBeNull();
  });

  it('states the outcome the server reported, write by write', () => {
    const sending = send(choose(choose(batch(), 'a', true), 'b', false))!.slip;
    const done = accepted(sending, { a: 'allowed', b: 'declined' });
    expect(done.status).toBe('done');
    expect(done.outcomes).toEqual({ a: 'allowed', b: 'declined' });
    expect(verdict(done)).toBe('1 of 2 allowed and done; the others changed nothing.');
    expect(slipHeading(done)).toBe('1 of 2 writes changed your ledger');
  });

  it('calls a write the server said nothing of unknown, never what the person chose', () => {
    const sending = send(chooseAll(batch(), true))!.slip;
    const partial = accepted(sending, { a: 'allowed' });
    expect(partial.outcomes).toEqual({ a: 'allowed', b: 'unknown' });
    expect(verdict(partial)).toMatch(/stopped before the server said/);
  });

  it('says expired when the server found the confirmation expired', () => {
    const sending = send(chooseAll(batch(), true))!.slip;
    const late = accepted(sending, { a: 'expired', b: 'expired' });
    expect(late.status).toBe('expired');
    expect(verdict(late)).toMatch(/^Expired: nothing was changed/);
    expect(expired(sending).outcomes).toEqual({ a: 'expired', b: 'expired' });
  });
});
