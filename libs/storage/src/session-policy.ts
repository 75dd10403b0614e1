import { CatalogError, ErrorCode, withoutTrailingSlashes } from '@app/catalog';
import { parseS3Uri } from './object-uri';
import type { VendedAccess } from './credential-vending';
import { policyPatternCharacter } from './policy-characters';

const READ_ACTIONS = ['s3:GetObject'];
// PutObject covers multipart parts and their completion; Lance aborts what it gave up on.
const WRITE_ACTIONS = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'];

/**
 * The inline session policy of one table's credentials: its objects (everything under its root,
 * its branches' `tree/<branch>/` included) read-only or read-write, and listing inside it only.
 * The session can never do more than the role's own policy allows; this only narrows it.
 * Locations are refused when they hold a pattern character, but a table recorded before that
 * rule, or a warehouse root holding one, must not become a wildcard here either.
 */
export function tableSessionPolicy(location: string, access: VendedAccess, partition = 'aws'): string {
  const { bucket, key } = parseS3Uri(location);
  const prefix = `${withoutTrailingSlashes(key)}/`;
  const special = policyPatternCharacter(`${bucket}/${prefix}`);
  if (special !== undefined) {
    throw new CatalogError(
      ErrorCode.InvalidInput,
      `no credentials are vended for this table: its location holds '${special}', which a storage policy reads as a pattern`,
      'Describe it with vend_credentials: false, or register its files again at a location without pattern characters.',
    );
  }
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: access === 'write' ? WRITE_ACTIONS : READ_ACTIONS, Resource: [`arn:${partition}:s3:::${bucket}/${prefix}*`] },
      { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: [`arn:${partition}:s3:::${bucket}`], Condition: { StringLike: { 's3:prefix': [`${prefix}*`] } } },
    ],
  });
}

/** A session policy that allows nothing: what a readiness probe's AssumeRole asks for. */
export const NOTHING_ALLOWED = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Deny', Action: ['s3:*'], Resource: ['*'] }],
});

/** `aws`, `aws-cn`, `aws-us-gov`...: the partition of the role, which the policy's ARNs share. */
export function partitionOf(roleArn: string): string {
  return /^arn:([^:]+):/.exec(roleArn)?.[1] ?? 'aws';
}
