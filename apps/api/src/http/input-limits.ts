import { DEFAULT_INPUT_LIMITS, InputLimits } from '@app/config';

/**
 * The input limits of this process. The body schemas are module-level zod schemas, checked where
 * no request or provider is at hand, so the configured limits are installed here once, when the
 * HTTP application is built from its config; until then (unit tests of the schemas) the defaults hold.
 */
const current: InputLimits = structuredClone(DEFAULT_INPUT_LIMITS);

export function inputLimits(): Readonly<InputLimits> {
  return current;
}

export function useInputLimits(limits: InputLimits): void {
  Object.assign(current, structuredClone(limits));
}
