import { useState } from 'preact/hooks';
import { pathId, unwrap } from '../api/client';
import { ErrorNote, Loading, Outcome, bytes, useAction, useAsync } from '../components/common';
import { useSession } from '../session-context';
import type { TableData } from './table';

type Tags = Record<string, { version: number; branch?: string; manifestSize?: number }>;

export function TagsTab({ data }: { data: TableData }) {
  const { api, can } = useSession();
  const tags = useAsync(
    async (signal) => {
      const all: Tags = {};
      let token: string | undefined;
      do {
        const page = (await unwrap(api.lance.POST('/v1/table/{id}/tags/list', { params: { path: { id: pathId(data.id) }, query: { page_token: token } }, signal }))) as {
          tags: Tags;
          page_token?: string | null;
        };
        Object.assign(all, page.tags);
        token = page.page_token ?? undefined;
      } while (token);
      return Object.entries(all).sort(([a], [b]) => a.localeCompare(b));
    },
    [api, pathId(data.id)],
    data.tick,
  );
  return (
    <>
      {tags.loading && !tags.data && <Loading what="tags" />}
      <ErrorNote error={tags.error} />
      {tags.data && tags.data.length === 0 && <p class="muted">No tags.</p>}
      {tags.data && tags.data.length > 0 && (
        <table class="grid" data-testid="tags">
          <caption>Tags</caption>
          <thead>
            <tr>
              <th scope="col">Tag</th>
              <th scope="col">Version</th>
              <th scope="col">Branch</th>
              <th scope="col">Manifest</th>
            </tr>
          </thead>
          <tbody>
            {tags.data.map(([name, t]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>{t.version}</td>
                <td>{t.branch ?? 'main'}</td>
                <td>{bytes(t.manifestSize)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {can('write') && <CreateTag data={data} onDone={tags.reload} />}
    </>
  );
}

function CreateTag({ data, onDone }: { data: TableData; onDone: () => void }) {
  const { api } = useSession();
  const [tag, setTag] = useState('');
  const [version, setVersion] = useState<number | undefined>(data.describe.version);
  const action = useAction();
  return (
    <details class="action">
      <summary>Create a tag</summary>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (version === undefined) return;
          void action.run(async () => {
            const answer = await unwrap(api.lance.POST('/v1/table/{id}/tags/create', { params: { path: { id: pathId(data.id) } }, body: { tag: tag.trim(), version } }));
            onDone();
            return `Tag ${tag.trim()} → version ${version} (transaction ${(answer as { transaction_id?: string }).transaction_id ?? '—'}).`;
          });
        }}
      >
        <label>
          Tag <input value={tag} required onInput={(e) => setTag(e.currentTarget.value)} />
        </label>
        <label>
          Version{' '}
          <select aria-label="Version" value={version} onChange={(e) => setVersion(Number(e.currentTarget.value))}>
            {[...data.versions].reverse().map((v) => (
              <option key={v.version} value={v.version}>
                {v.version}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={action.busy}>
          Create tag
        </button>
      </form>
      <Outcome ok={action.ok} error={action.error} />
    </details>
  );
}
