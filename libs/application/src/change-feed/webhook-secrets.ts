import { createHmac } from 'node:crypto';

/**
 * Each subscription's signing secret, derived (HMAC-SHA256 of WEBHOOK_SECRET_KEY over the database
 * and the subscription's id) rather than stored: the log records the subscription without it, every
 * replica computes the same one, and rotating the key rotates every secret. Standard Webhooks' form:
 * `whsec_` and the key's base64.
 */
export function webhookSecret(serverKey: string, database: string, subscriptionId: string): string {
  const key = createHmac('sha256', serverKey).update(`lance-catalog webhook\0${database}\0${subscriptionId}`).digest();
  return `whsec_${key.toString('base64')}`;
}
