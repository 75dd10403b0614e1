/** Object ids in the console's own addresses (the part after #): parts joined by `$`, then URI-encoded. */
export function encodeId(parts: readonly string[]): string {
  return encodeURIComponent(parts.join('$'));
}

export function decodeId(segment: string): string[] {
  const joined = decodeURIComponent(segment);
  return joined === '' ? [] : joined.split('$');
}

export const tableHref = (id: readonly string[], tab?: string) => `/table/${encodeId(id)}${tab ? `/${tab}` : ''}`;
export const namespaceHref = (id: readonly string[]) => (id.length === 0 ? '/' : `/ns/${encodeId(id)}`);
export const transactionHistoryHref = (id: string) => `/history/transaction/${encodeURIComponent(id)}`;
