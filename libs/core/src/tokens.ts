export const APP_CONFIG = Symbol('APP_CONFIG');
export const EVENT_STORE = Symbol('EVENT_STORE');
/** The manifest finaliser of this warehouse: local (hard links) or object store (copies). */
export const MANIFEST_FINALISER = Symbol('MANIFEST_FINALISER');
export const DATA_PLANE = Symbol('DATA_PLANE');
