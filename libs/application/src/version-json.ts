import { VersionRecord } from '@app/catalog';

/** A version record as the protocol's TableVersion. */
export function tableVersionJson(v: VersionRecord) {
  return {
    version: v.version,
    manifest_path: v.manifestPath,
    ...(v.manifestSize !== undefined ? { manifest_size: v.manifestSize } : {}),
    ...(v.eTag !== undefined ? { e_tag: v.eTag } : {}),
    timestamp_millis: v.timestampMillis,
    ...(v.metadata !== undefined ? { metadata: v.metadata } : {}),
  };
}
