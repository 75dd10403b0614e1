import { AccessView, WebhookSubscriptionState } from '@app/catalog';

/**
 * Whether a subscription's creator may still hold it: would be let create it now, judged as a
 * request to create one is (its credential's own level, and `view`'s grants where they decide for
 * it). The HTTP edge knows the credentials (apps/api/src/auth/subscription-holders.ts).
 */
export interface SubscriptionCreators {
  mayHold(database: string, subscription: WebhookSubscriptionState, view: AccessView): boolean;
}

/** What describe and list say of an active subscription whose creator may not hold it now: why, and what to do. */
export function suspension(s: WebhookSubscriptionState, database: string): { reason: string; to_resume: string } {
  const recreate = 'an admin of the database deletes it and creates it again, as its own (the new one has a new signing secret)';
  if (s.createdBy === undefined) {
    return {
      reason: `its creator, an anonymous caller from before authentication was configured, may no longer create subscriptions in database '${database}': events recorded while it is so are passed over, never delivered`,
      to_resume: recreate,
    };
  }
  return {
    reason: `its creator '${s.createdBy}' is no longer an admin of database '${database}': events recorded while it is not are passed over, never delivered`,
    to_resume: `'${s.createdBy}' is made an admin of the database again (deliveries go on from the next event), or ${recreate}`,
  };
}
