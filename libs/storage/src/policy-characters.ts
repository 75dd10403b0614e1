/**
 * Characters an IAM policy reads as more than themselves: `*` and `?` are wildcards in a resource
 * ARN and in `StringLike`, `${...}` is a policy variable (and `$` starts one), brackets are
 * reserved, and a quote or backslash would end or escape a JSON string were anyone to build the
 * policy by hand. A location holding one would open more than its own folder in a session policy
 * built from it, so no location may hold one at all.
 */
const POLICY_SPECIAL = /[*?${}[\]"\\]/;

/** The first character of `text` a storage policy would read as a pattern, if any. */
export function policyPatternCharacter(text: string): string | undefined {
  return POLICY_SPECIAL.exec(text)?.[0];
}

/** The characters, as a caller is told them. */
export const POLICY_SPECIAL_SHOWN = '* ? $ { } [ ] " \\';
