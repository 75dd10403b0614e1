export interface Reply<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/** A small client for the REST binding: ids are form-urlencoded the way the Lance clients do it. */
export class Api {
  constructor(
    readonly url: string,
    private readonly defaultHeaders: Record<string, string> = {},
  ) {}

  withHeaders(headers: Record<string, string>): Api {
    return new Api(this.url, { ...this.defaultHeaders, ...headers });
  }

  static id(parts: string[], delimiter = '$'): string {
    const joined = parts.length === 0 ? delimiter : parts.join(delimiter);
    return encodeURIComponent(joined).replace(/%20/g, '+');
  }

  async post<T = any>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
    const raw = typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body);
    return this.send<T>('POST', path, raw, { 'content-type': 'application/json', ...headers });
  }

  async get<T = any>(path: string, headers: Record<string, string> = {}): Promise<Reply<T>> {
    return this.send<T>('GET', path, undefined, headers);
  }

  async send<T>(method: string, path: string, body: string | Buffer | undefined, headers: Record<string, string>): Promise<Reply<T>> {
    const res = await fetch(this.url + path, { method, body, headers: { ...this.defaultHeaders, ...headers } });
    const text = await res.text();
    let parsed: any = undefined;
    try {
      parsed = text.length ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed as T, text, headers: res.headers };
  }
}
