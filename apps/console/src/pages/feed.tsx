import { useEffect, useState } from 'preact/hooks';
import { ErrorNote, Loading, When, useAsync } from '../components/common';
import { useSession } from '../session-context';

interface Subscription {
  subscription_id: string;
  url: string;
  event_types?: string[];
  namespace?: string;
  from_revision?: number;
  status: 'active' | 'paused' | 'suspended';
  created_at?: string;
  paused?: { reason: string; at: string; revision: number };
  /** Its creator may no longer hold it: why, and what makes it deliver again. */
  suspended?: { reason: string; to_resume: string };
}

interface Delivery extends Subscription {
  delivered_revision: number;
  head_revision: number;
  lag_events: number;
  lag_seconds: number;
  last_error?: string;
  failing_since?: string;
  delivery_state?: string;
}

/** How often the page asks again while it is open: lag moves by the second. */
const REFRESH_MS = 5000;

/**
 * The database's webhook subscriptions and how each is delivering: the revision it reached, its
 * lag in events and seconds, its last error, why it was paused or is suspended. Admins of the
 * database only (the API refuses others, and the page says so).
 */
export function FeedPage() {
  const { api } = useSession();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const deliveries = useAsync(
    async () => {
      const { subscriptions } = await api.post<{ subscriptions: Subscription[] }>('/v1/subscriptions/list', {});
      return Promise.all(subscriptions.map((s) => api.post<Delivery>('/v1/subscriptions/describe', { subscription_id: s.subscription_id })));
    },
    [api],
    tick,
  );
  return (
    <section aria-labelledby="feed-title">
      <h1 id="feed-title">Change feed</h1>
      <p class="muted">
        Webhook subscriptions to this database's log, each event a signed CloudEvent, in order. Lag is what the log holds that a subscription has not been
        delivered yet; it refreshes every {REFRESH_MS / 1000} s.
      </p>
      {deliveries.loading && !deliveries.data && <Loading what="subscriptions" />}
      <ErrorNote error={deliveries.error} what="The subscriptions could not be read" />
      {deliveries.data && (
        <table class="grid" data-testid="subscriptions">
          <caption>{deliveries.data.length} subscriptions</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Status</th>
              <th scope="col">Delivered</th>
              <th scope="col">Lag (events)</th>
              <th scope="col">Lag (s)</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data.map((d) => (
              <tr key={d.subscription_id} data-testid="subscription">
                <td>
                  <code>{d.url}</code>
                </td>
                <td>
                  {d.event_types ? d.event_types.join(', ') : 'all'}
                  {d.namespace ? ` in ${d.namespace}` : ''}
                </td>
                <td>
                  <span class={`badge ${d.status === 'active' ? (d.last_error ? 'busy' : 'ok') : 'bad'}`}>{d.status}</span>
                  {d.paused && (
                    <>
                      {' '}
                      since <When at={d.paused.at} />: {d.paused.reason}
                    </>
                  )}
                  {d.suspended && (
                    <>
                      {' '}
                      {d.suspended.reason}; to resume: {d.suspended.to_resume}
                    </>
                  )}
                </td>
                <td>
                  {d.delivered_revision} of {d.head_revision}
                </td>
                <td data-testid="lag-events">{d.lag_events}</td>
                <td>{d.lag_seconds.toFixed(1)}</td>
                <td>
                  {d.last_error ?? d.delivery_state ?? '—'}
                  {d.failing_since && (
                    <>
                      {' '}
                      (failing since <When at={d.failing_since} />)
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
