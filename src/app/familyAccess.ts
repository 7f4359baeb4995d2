// What the family circle does beyond its records: mailing an invitation through SMTP_URL, and
// ending a former member's credentials (API keys, connected apps) the moment they leave.
import nodemailer from 'nodemailer';
import type { Config } from '../config.js';
import type { InviteStore } from '../family/invites.js';
import { sentence } from '../http/prose.js';
import type { KeyStore } from '../keys/keys.js';
import type { OAuthStore } from '../oauth/store.js';

export interface InvitationMail {
  to: string;
  workspaceName: string;
  inviter: string;
  lovedOnes: string[];
  link: string;
}

export const inviteLink = (config: Pick<Config, 'appUrl'>, token: string): string => `${config.appUrl}/join/${encodeURIComponent(token)}`;

export function invitationText(mail: InvitationMail): string {
  const who = mail.lovedOnes.length ? ` to help look after ${mail.lovedOnes.join(' and ')}` : '';
  return [
    sentence(`${mail.inviter} invited you to the family workspace "${mail.workspaceName}" on carecircle${who}`),
    '',
    `To join, open this link and sign in with this email address (${mail.to}):`,
    mail.link,
    '',
    'The link works once and for 7 days. If you did not expect this, you can ignore this email.',
    '',
  ].join('\n');
}

/** Mail an invitation; false when mail is off (no SMTP_URL). A relay that refuses throws. */
export async function mailInvitation(config: Pick<Config, 'smtpUrl' | 'mailFrom'>, mail: InvitationMail): Promise<boolean> {
  if (!config.smtpUrl) return false;
  const transport = nodemailer.createTransport(config.smtpUrl);
  try {
    await transport.sendMail({
      from: config.mailFrom,
      to: mail.to,
      subject: `You're invited to ${mail.workspaceName} on carecircle`,
      text: invitationText(mail),
    });
    return true;
  } finally {
    transport.close();
  }
}

/** Create an invitation and mail it when mail is on; the link comes back either way, for a
 *  caregiver to copy when it was not (or could not be) sent. */
export async function issueInvitation(
  deps: { config: Pick<Config, 'appUrl' | 'smtpUrl' | 'mailFrom'>; invites: InviteStore },
  input: { workspaceId: string; workspaceName: string; lovedOnes: string[]; email: string; invitedBy: { uid: string; email: string; name?: string } },
): Promise<{ link: string; email: string; sent: boolean; mailFailed: boolean }> {
  const { token, invite } = await deps.invites.create(input.workspaceId, input.email, input.invitedBy);
  const link = inviteLink(deps.config, token);
  const mail = {
    to: invite.email,
    workspaceName: input.workspaceName,
    inviter: input.invitedBy.name ?? input.invitedBy.email,
    lovedOnes: input.lovedOnes,
    link,
  };
  try {
    return { link, email: invite.email, sent: await mailInvitation(deps.config, mail), mailFailed: false };
  } catch {
    return { link, email: invite.email, sent: false, mailFailed: true };
  }
}

/** A former member's API keys and app grants stop working on their next request. Through the
 *  stores' own revoke functions, so whatever they cache is told too. */
export async function revokeCredentialsOf(uid: string, deps: { keys: KeyStore; oauth: OAuthStore }): Promise<{ keys: number; apps: number }> {
  const active = (await deps.keys.list(uid)).filter((k) => k.status === 'active');
  for (const key of active) await deps.keys.revoke(uid, key.id);
  const apps = await deps.oauth.connectedApps(uid);
  for (const app of apps) await deps.oauth.revokeGrantOf(uid, app.grantId);
  return { keys: active.length, apps: apps.length };
}
