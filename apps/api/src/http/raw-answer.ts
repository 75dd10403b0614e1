import { STATUS_CODES } from 'node:http';

/**
 * An HTTP/1.1 answer in the protocol's JSON, written straight to a socket no request of which Node
 * hands to Fastify (a request its parser refused, a connection past a cap); the connection closes
 * after it.
 */
export function rawJsonAnswer(status: number, body: { error: string; code: number }, headers: Record<string, string> = {}): string {
  const text = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(text)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  return `${lines.join('\r\n')}\r\n\r\n${text}`;
}
