export const APP_CONFIG = Symbol('APP_CONFIG');
export const EVENT_STORE = Symbol('EVENT_STORE');
/** The manifest finaliser of this warehouse: local (hard links) or object store (copies). */
export const MANIFEST_FINALISER = Symbol('MANIFEST_FINALISER');
export const DATA_PLANE = Symbol('DATA_PLANE');
/** What clients are handed to reach a table's files: static options or STS sessions (a CredentialVending). */
export const CREDENTIAL_VENDING = Symbol('CREDENTIAL_VENDING');
/** The change feed's ledger in Redis (leases, checkpoints), or null when no change feed is configured. */
export const FEED_LEDGER = Symbol('FEED_LEDGER');
/** The webhook deliverer with its SSRF guard (an HttpWebhookDelivery), or null without WEBHOOK_SECRET_KEY. */
export const WEBHOOK_DELIVERY = Symbol('WEBHOOK_DELIVERY');
