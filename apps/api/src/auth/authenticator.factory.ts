import { ApiKeyRegistry, Authenticator, JwtVerifier } from '@app/auth';
import type { AuthSettings } from '@app/config';

export function authenticatorFor(settings: AuthSettings): Authenticator {
  return new Authenticator({
    apiKeys: new ApiKeyRegistry(settings.apiKeys),
    jwt: settings.jwt ? new JwtVerifier(settings.jwt) : undefined,
    serviceKey: settings.serviceKey,
  });
}
