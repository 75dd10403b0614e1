export const APP_CONFIG = Symbol('APP_CONFIG');
export const EVENT_STORE = Symbol('EVENT_STORE');
