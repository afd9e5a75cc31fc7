import { describe, expect, it } from 'vitest';
import { mayAsk, spent, type Gate } from './bot-gate';

describe('the bot check gate, as a sequence of turns', () => {
  it('stays open across turns when the site asks for no check', () => {
    let gate: Gate = { asked: false, token: null };
    for (let turn = 0; turn < 3; turn++) {
      expect(mayAsk(gate)).toBe(true);
      gate = spent(gate);
    }
  });

  it('opens with each token, closes once it is spent, and stays open once the visitor passed', () => {
    let gate: Gate = { asked: true, token: null };
    expect(mayAsk(gate)).toBe(false);
    gate = { ...gate, token: 'token-1' };
    expect(mayAsk(gate)).toBe(true);
    // The first try was refused (a failed check): its token is spent, the composer waits for the next.
    gate = spent(gate);
    expect(mayAsk(gate)).toBe(false);
    gate = { ...gate, token: 'token-2' };
    expect(mayAsk(gate)).toBe(true);
    // That one passed: the session no longer asks, and no token is needed for later turns.
    gate = { ...spent(gate), asked: false };
    expect(mayAsk(gate)).toBe(true);
    gate = spent(gate);
    expect(mayAsk(gate)).toBe(true);
  });
});
