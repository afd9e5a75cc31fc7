import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { googleRefusal, refusalSentence } from './refusals';

describe('what the page says when the server refuses', () => {
  it('says why a conversation takes no message now, from the reason of the 409', () => {
    const waiting = refusalSentence(new ApiError(409, 'server words', 'awaiting_confirm'));
    expect(waiting.text).toMatch(/allow or decline a write/);
    const running = refusalSentence(new ApiError(409, 'server words', 'turn_running'));
    expect(running.text).toMatch(/still answering/);
    const claimed = refusalSentence(new ApiError(409, 'server words'));
    expect(claimed.text).toMatch(/Another tab/);
  });

  it('names the daily budget on a 503', () => {
    expect(refusalSentence(new ApiError(503, 'x', 'daily_cap')).text).toMatch(/daily model budget/);
  });

  it('tells a failed bot check from a missing one and from a check that could not be made', () => {
    const failed = refusalSentence(new ApiError(403, 'x', 'bot_check_failed'));
    expect(failed).toEqual({ word: 'failed', text: 'Verification failed. Reload the page and try again.' });
    expect(refusalSentence(new ApiError(403, 'x', 'bot_check_required')).text).toMatch(/check above the message box/);
    const unavailable = refusalSentence(new ApiError(503, 'x', 'bot_check_unavailable'));
    expect(unavailable.word).toBe('paused');
    expect(unavailable.text).toMatch(/cannot be verified right now/);
    expect(refusalSentence(new ApiError(403, 'x')).text).toMatch(/kakeibo’s own page/);
  });

  it('says why a Google sign-in came back, and never leaves a reason unsaid', () => {
    expect(googleRefusal('google_cancelled')).toMatch(/cancelled/);
    expect(googleRefusal('google_unproven')).toMatch(/never confirmed/);
    expect(googleRefusal('password_only')).toMatch(/password only/);
    expect(googleRefusal('google_token')).toMatch(/could not be verified/);
    expect(googleRefusal('anything new')).toMatch(/could not be verified/);
  });
});
