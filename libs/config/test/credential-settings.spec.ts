import { ConfigError, loadConfig } from '../src';

const S3 = { WAREHOUSE: 's3://warehouse/lance', AWS_ENDPOINT_URL: 'http://127.0.0.1:7480', AWS_ACCESS_KEY_ID: 'catalog', AWS_SECRET_ACCESS_KEY: 'secret' };
const ROLE = 'arn:aws:iam::123456789012:role/lance-tables';

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
};

describe('client credentials (CLIENT_CREDENTIALS and STS_*)', () => {
  it('hands out static options by default', () => {
    expect(loadConfig({}).clientCredentials).toEqual({ mode: 'static' });
    expect(loadConfig({ ...S3, CLIENT_CREDENTIALS: 'STATIC' }).clientCredentials).toEqual({ mode: 'static' });
  });

  it('reads STS settings: the roles, the endpoint (its own variable first), the session length and the catalog\'s own keys', () => {
    const c = loadConfig({
      ...S3,
      AWS_REGION: 'eu-west-1',
      CLIENT_CREDENTIALS: 'sts',
      STS_ROLE_ARN: ROLE,
      STS_ROLE_ARN_BY_DATABASE: JSON.stringify({ sales: 'arn:aws-cn:iam::123456789012:role/sales', rgw: 'arn:aws:iam:::role/tables' }),
      AWS_ENDPOINT_URL_STS: 'https://sts.example.com/',
      VENDED_CREDENTIALS_SECONDS: '900',
    });
    expect(c.clientCredentials).toEqual({
      mode: 'sts',
      roleArn: ROLE,
      roleArnByDatabase: { sales: 'arn:aws-cn:iam::123456789012:role/sales', rgw: 'arn:aws:iam:::role/tables' },
      endpoint: 'https://sts.example.com',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'catalog', secretAccessKey: 'secret', sessionToken: undefined },
      durationSeconds: 900,
      chainingCheckSeconds: 300,
    });
    const shared = loadConfig({ ...S3, CLIENT_CREDENTIALS: 'sts', STS_ROLE_ARN: ROLE }).clientCredentials;
    expect(shared).toMatchObject({ endpoint: 'http://127.0.0.1:7480', durationSeconds: 3600, roleArnByDatabase: {} });
  });

  it('refuses what cannot work, each with its reason', () => {
    expect(problems({ CLIENT_CREDENTIALS: 'sts', STS_ROLE_ARN: ROLE })).toEqual([expect.stringMatching(/^CLIENT_CREDENTIALS: sts .*WAREHOUSE=s3:/)]);
    expect(problems({ ...S3, CLIENT_CREDENTIALS: 'sts' })).toEqual([expect.stringMatching(/^STS_ROLE_ARN: CLIENT_CREDENTIALS=sts needs a role ARN/)]);
    expect(problems({ ...S3, CLIENT_CREDENTIALS: 'sts', STS_ROLE_ARN: 'lance-tables' })).toEqual([expect.stringMatching(/^STS_ROLE_ARN: 'lance-tables' is not a role ARN/)]);
    expect(problems({ ...S3, CLIENT_CREDENTIALS: 'gcs' })).toEqual([expect.stringMatching(/^CLIENT_CREDENTIALS: 'gcs' is not served.*not built/)]);
    expect(problems({ ...S3, CLIENT_CREDENTIALS: 'sts', STS_ROLE_ARN: ROLE, STS_ROLE_ARN_BY_DATABASE: '["x"]' })).toEqual([
      expect.stringMatching(/^STS_ROLE_ARN_BY_DATABASE: must be a JSON object/),
    ]);
    expect(problems({ ...S3, CLIENT_CREDENTIALS: 'sts', STS_ROLE_ARN: ROLE, STS_ROLE_ARN_BY_DATABASE: '{"a b":"x","ok":"role/x"}' })).toEqual([
      expect.stringMatching(/^STS_ROLE_ARN_BY_DATABASE: 'a b' is not a database name/),
      expect.stringMatching(/^STS_ROLE_ARN_BY_DATABASE.ok: 'role\/x' is not a role ARN/),
    ]);
    expect(problems({ ...S3, CLIENT_CREDENTIALS: 'sts', STS_ROLE_ARN: ROLE, AWS_ENDPOINT_URL_STS: 'sts.example.com' })).toEqual([
      expect.stringMatching(/^AWS_ENDPOINT_URL_STS: 'sts.example.com' must be an http/),
    ]);
    for (const seconds of ['0', '43201', '1.5', 'soon']) {
      expect(problems({ ...S3, VENDED_CREDENTIALS_SECONDS: seconds })).toEqual([`VENDED_CREDENTIALS_SECONDS: must be an integer from 1 to 43200, got '${seconds}'`]);
    }
    expect(loadConfig({ ...S3, CLIENT_CREDENTIALS: 'sts', STS_ROLE_ARN: ROLE, STS_CHAINING_CHECK_SECONDS: '2' }).clientCredentials).toMatchObject({ chainingCheckSeconds: 2 });
    for (const seconds of ['0', '86401', 'often']) {
      expect(problems({ ...S3, CLIENT_CREDENTIALS: 'sts', STS_ROLE_ARN: ROLE, STS_CHAINING_CHECK_SECONDS: seconds })).toEqual([
        `STS_CHAINING_CHECK_SECONDS: must be an integer from 1 to 86400, got '${seconds}'`,
      ]);
    }
  });

  it('refuses static credentials in the client options when STS vends them', () => {
    const found = problems({
      ...S3,
      CLIENT_CREDENTIALS: 'sts',
      STS_ROLE_ARN: ROLE,
      CLIENT_STORAGE_OPTIONS: JSON.stringify({ aws_access_key_id: 'reader', aws_secret_access_key: 's', aws_region: 'us-east-1' }),
      CLIENT_STORAGE_OPTIONS_BY_DATABASE: JSON.stringify({ sales: { expires_at_millis: '1' }, ok: { allow_http: 'true' } }),
    });
    expect(found).toEqual([
      'CLIENT_STORAGE_OPTIONS: holds aws_access_key_id, aws_secret_access_key; with CLIENT_CREDENTIALS=sts the catalog vends credentials itself',
      'CLIENT_STORAGE_OPTIONS_BY_DATABASE.sales: holds expires_at_millis; with CLIENT_CREDENTIALS=sts the catalog vends credentials itself',
    ]);
  });
});
