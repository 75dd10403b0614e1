import { withoutTrailingSlashes, withoutEdgeSlashes } from '@app/catalog';
/** `s3://bucket/key...`: the bucket and the key inside it (no leading slash). */
export interface ObjectUri {
  bucket: string;
  key: string;
}

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/** The URI scheme of a location (`s3`, `gs`...), or undefined for a plain path. */
export function schemeOf(location: string): string | undefined {
  return SCHEME.exec(location)?.[1].toLowerCase();
}

export function isS3Uri(location: string): boolean {
  return schemeOf(location) === 's3';
}

export function parseS3Uri(uri: string): ObjectUri {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(uri);
  if (!m) throw new Error(`'${uri}' is not an s3:// URI`);
  return { bucket: m[1], key: m[2] };
}

export function s3Uri({ bucket, key }: ObjectUri): string {
  return `s3://${bucket}/${key}`;
}

/** A location under a directory-like root: segments joined with single slashes. */
export function joinLocation(root: string, ...segments: string[]): string {
  return [withoutTrailingSlashes(root), ...segments.map(withoutEdgeSlashes)].join('/');
}
