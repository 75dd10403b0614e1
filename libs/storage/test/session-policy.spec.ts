import { CREDENTIAL_OPTIONS, partitionOf, policyPatternCharacter, refreshOffsetMillis, tableSessionPolicy, withoutCredentials } from '../src';

describe('the session policy of one table', () => {
  it('allows reading the table\'s objects and listing inside it, nothing else, for a read-level caller', () => {
    expect(JSON.parse(tableSessionPolicy('s3://warehouse/lance/default/shop/items-abc.lance', 'read'))).toEqual({
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::warehouse/lance/default/shop/items-abc.lance/*'] },
        {
          Effect: 'Allow',
          Action: ['s3:ListBucket'],
          Resource: ['arn:aws:s3:::warehouse'],
          Condition: { StringLike: { 's3:prefix': ['lance/default/shop/items-abc.lance/*'] } },
        },
      ],
    });
  });

  it('adds writing, deleting and multipart uploads under the same prefix for write and above', () => {
    const policy = JSON.parse(tableSessionPolicy('s3://warehouse/t.lance/', 'write', 'aws-cn'));
    expect(policy.Statement[0]).toEqual({
      Effect: 'Allow',
      Action: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
      Resource: ['arn:aws-cn:s3:::warehouse/t.lance/*'],
    });
    expect(policy.Statement[1].Condition).toEqual({ StringLike: { 's3:prefix': ['t.lance/*'] } });
  });

  it('refuses to build a policy from a location a storage policy would read as a pattern', () => {
    for (const location of ['s3://warehouse/lance/default/n*', 's3://warehouse/t?.lance', 's3://warehouse/${aws:username}', 's3://wh[1]/t', 's3://warehouse/a"b']) {
      expect(() => tableSessionPolicy(location, 'read')).toThrow(/its location holds '.', which a storage policy reads as a pattern/);
    }
    expect(policyPatternCharacter('s3://warehouse/lance/default/shop/t_-0123456789ab.lance')).toBeUndefined();
  });

  it('takes the partition from the role', () => {
    expect(partitionOf('arn:aws-us-gov:iam::123456789012:role/x')).toBe('aws-us-gov');
    expect(partitionOf('arn:aws:iam:::role/x')).toBe('aws');
  });

  it('refreshes a fifth of a session\'s life before its end, at most a minute before', () => {
    expect(refreshOffsetMillis(5)).toBe(1000);
    expect(refreshOffsetMillis(900)).toBe(60_000);
    expect(refreshOffsetMillis(3600)).toBe(60_000);
  });

  it('tells credentials from the options that only say how to reach the store', () => {
    const options = {
      aws_endpoint: 'http://127.0.0.1:7480',
      aws_region: 'us-east-1',
      allow_http: 'true',
      aws_virtual_hosted_style_request: 'false',
      aws_access_key_id: 'a',
      aws_secret_access_key: 'b',
      aws_session_token: 'c',
      expires_at_millis: '1',
      refresh_offset_millis: '1000',
    };
    expect(withoutCredentials(options)).toEqual({ aws_endpoint: 'http://127.0.0.1:7480', aws_region: 'us-east-1', allow_http: 'true', aws_virtual_hosted_style_request: 'false' });
    expect(CREDENTIAL_OPTIONS.test('azure_storage_sas_token')).toBe(true);
  });
});
