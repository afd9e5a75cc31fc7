import { describe, expect, it } from 'vitest';
import { messagesText } from './messages';

describe('messagesText', () => {
  it('counts the visitor’s own limit', () => {
    expect(messagesText({ limit: 8, used: 3, left: 5, binding: 'visitor' }, true, false)).toBe('5 of 8 messages left today.');
    expect(messagesText({ limit: 8, used: 8, left: 0, binding: 'visitor' }, true, true)).toBe(
      'No messages left today (8 a day; signing up raises it). They renew at midnight UTC.',
    );
    expect(messagesText({ limit: 25, used: 25, left: 0, binding: 'visitor' }, false, true)).toBe('No messages left today (25 a day). They renew at midnight UTC.');
  });

  it('says so when the network’s shared limit is the one that binds', () => {
    expect(messagesText({ limit: 20, used: 18, left: 2, binding: 'network' }, true, false)).toBe(
      '2 of 20 messages left today on your network (shared by the visitors on it who have not signed in).',
    );
    expect(messagesText({ limit: 20, used: 20, left: 0, binding: 'network' }, true, true)).toMatch(/^No messages left today on your network .*signing in leaves it/);
  });
});
