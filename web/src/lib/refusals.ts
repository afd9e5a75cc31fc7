// What the page says when the server refuses: each reason its own sentence, so a person knows
// what happened and what to do. The server's own sentence is the fallback for anything new.

import { ApiError } from '../api/client';

export interface Said {
  /** The status word beside the sentence. */
  word: 'paused' | 'failed' | 'note';
  text: string;
}

const BY_REASON: Record<string, string> = {
  owner_quota: 'You have reached today’s message limit for this session. Messages renew at midnight UTC.',
  ip_quota: 'This network has reached today’s message limit. Messages renew at midnight UTC.',
  daily_cap: 'kakeibo has reached its daily model budget. Live chat resumes tomorrow (midnight UTC).',
  blocked: 'This session has been paused by the operator.',
  paused: 'kakeibo’s live chat is paused by the operator. Your ledger, dashboard and traces still work.',
  database_unavailable: 'kakeibo’s database is unavailable for a moment (restarting, perhaps). Try again in a few seconds; nothing was lost.',
  bot_check_unavailable: 'The check that you are a person cannot be verified right now. Try again in a minute; your message was not counted.',
  no_model:
    'No model is configured on this server, so nothing can answer. Set a provider key (README, Configuration), or run the scripted demo with cargo xtask dev --demo.',
};

export function refusalSentence(e: unknown, anonymous = true): Said {
  if (!(e instanceof ApiError)) return { word: 'failed', text: e instanceof Error ? e.message : String(e) };
  if (e.status === 503) {
    let text = (e.reason && BY_REASON[e.reason]) || e.message || 'Live chat is unavailable right now.';
    if (e.reason === 'owner_quota' && anonymous) text += ' Signing up raises the limit.';
    return { word: 'paused', text };
  }
  switch (e.status) {
    case 0:
      return { word: 'failed', text: e.message };
    case 401:
      return { word: 'failed', text: 'Your session has ended. Reload the page to start a new one.' };
    case 403:
      if (e.reason === 'bot_check_failed') return { word: 'failed', text: 'Verification failed. Reload the page and try again.' };
      if (e.reason === 'bot_check_required')
        return { word: 'note', text: 'Complete the check above the message box that you are a person, then send again; your message was not counted.' };
      return { word: 'failed', text: 'This request did not come from kakeibo’s own page. Reload the page and try again.' };
    case 404:
      return { word: 'failed', text: 'That conversation is not yours, or it no longer exists. Start a new one.' };
    case 409:
      if (e.reason === 'awaiting_confirm')
        return { word: 'note', text: 'This conversation is waiting for you to allow or decline a write. Answer that first, then send your message again; it was not counted.' };
      if (e.reason === 'turn_running')
        return { word: 'note', text: 'This conversation is still answering (in another tab, perhaps). Wait for it to finish, then send again; your message was not counted.' };
      return { word: 'note', text: 'Another tab is answering this. Wait for it to finish, then try again.' };
    case 410:
      return { word: 'note', text: 'Expired: nothing was changed. That confirmation is no longer waiting. Ask again to start a fresh turn.' };
    case 413:
      return { word: 'failed', text: 'That is larger than the site accepts.' };
    case 429:
      return { word: 'failed', text: e.message };
    default:
      return { word: 'failed', text: e.message };
  }
}

/** Why a Google sign-in came back to /sign-in (`?error=REASON`), in words. */
export function googleRefusal(reason: string): string {
  switch (reason) {
    case 'google_cancelled':
      return 'Google sign-in was cancelled; nothing changed.';
    case 'google_unverified_email':
      return 'That Google account’s email is not verified, so it cannot sign in here.';
    case 'google_unproven':
      return 'An account with that address was made with a password, and the address was never confirmed. Sign in with that password first, then use Google — or reset the password by mail.';
    case 'google_taken':
      return 'That email belongs to an account linked to another Google account. Sign in with its password.';
    case 'password_only':
      return 'That account signs in with its password only.';
    case 'google_unavailable':
      return 'Google could not be reached just now. Try again in a minute.';
    case 'google_flow':
      return 'That sign-in took too long or was started in another browser. Start it again.';
    default:
      return 'Google sign-in could not be verified. Start it again.';
  }
}
