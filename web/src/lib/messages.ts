// The chat's message counter: the limit that binds, in words, and which one it is.

import type { MessagesToday } from '../api/types';

/** "5 of 8 messages left today.", or the network's count when the address's limit binds (it is
 * shared by every anonymous visitor on the network, and signing in leaves it). */
export function messagesText(messages: MessagesToday, anonymous: boolean, out: boolean): string {
  const network = messages.binding === 'network';
  if (out) {
    if (network) {
      return `No messages left today on your network (${messages.limit} a day, shared by the visitors on it who have not signed in; signing in leaves it). They renew at midnight UTC.`;
    }
    return `No messages left today (${messages.limit} a day${anonymous ? '; signing up raises it' : ''}). They renew at midnight UTC.`;
  }
  if (network) {
    return `${messages.left} of ${messages.limit} messages left today on your network (shared by the visitors on it who have not signed in).`;
  }
  return `${messages.left} of ${messages.limit} messages left today.`;
}
