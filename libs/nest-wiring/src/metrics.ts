import { WEBHOOK_SINK_PREFIX } from '@app/application';
import type { DataPlaneEnd } from '@app/lance';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const REQUEST_LABELS = ['operation', 'method', 'status'] as const;
type RequestLabels = (typeof REQUEST_LABELS)[number];

/**
 * Sets a counter, as it is collected, to the observation counts of a histogram with the same
 * labels. The counts are read first and the counter rewritten in one synchronous step, so two
 * scrapes at once never add their counts up.
 */
function countsOf(histogram: Histogram<RequestLabels>) {
  return async function (this: Counter<RequestLabels>) {
    const counts = (await histogram.get()).values.filter((value) => value.metricName?.endsWith('_count'));
    this.reset();
    for (const value of counts) this.inc(value.labels as Record<RequestLabels, string>, value.value);
  };
}

/**
 * How often Node's event-loop delay is sampled for the `nodejs_eventloop_lag_*` series. prom-client's
 * default, 10 ms, is a timer that wakes the process 100 times a second with nothing to do: an idle
 * server spent about 15 ms of CPU a second, 2.5 to 3 ms with this. A delay long enough to matter
 * still shows.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

export interface MetricsOptions {
  /**
   * Whether series name the database they are about. Off by default: a scrape would otherwise
   * list every database (tenant) this process serves to whoever may scrape.
   */
  databaseLabels?: boolean;
}

/** Every Prometheus metric this process exports, on one registry. */
export class Metrics {
  readonly registry = new Registry();
  readonly requestSeconds = new Histogram({
    name: 'lance_catalog_http_request_duration_seconds',
    help: 'HTTP request latency by operation (route) and status',
    labelNames: REQUEST_LABELS,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  /**
   * The same counts as the latency histogram's `_count`, under the conventional name. Derived when
   * scraped rather than counted per request: a labelled increment costs about as much as the
   * observation itself, on every request.
   */
  readonly requests = new Counter({
    name: 'lance_catalog_http_requests_total',
    help: 'HTTP requests by operation (route) and status',
    labelNames: REQUEST_LABELS,
    registers: [this.registry],
    collect: countsOf(this.requestSeconds),
  });
  readonly appendSeconds = new Histogram({
    name: 'lance_catalog_event_store_append_duration_seconds',
    help: 'Event store append latency, conflicts included',
    labelNames: ['outcome'],
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
    registers: [this.registry],
  });
  private readonly projectionLag: Gauge<'database'>;
  readonly queueDepth = new Gauge({
    name: 'lance_catalog_queue_jobs',
    help: 'Jobs per queue and state',
    labelNames: ['queue', 'state'],
    registers: [this.registry],
  });
  readonly jobSeconds = new Histogram({
    name: 'lance_catalog_job_duration_seconds',
    help: 'Job run time by job type and outcome',
    labelNames: ['type', 'outcome'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800],
    registers: [this.registry],
  });
  private readonly dataPlaneEnds = new Counter({
    name: 'lance_catalog_data_plane_process_ends_total',
    help: 'Data-plane processes ended under an operation: crashed, killed at the memory cap, past DATA_PLANE_TIMEOUT_MS (timeout), or when the caller left (cancelled)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly dataPlaneQueueSeconds = new Histogram({
    name: 'lance_catalog_data_plane_queue_seconds',
    help: 'How long data operations waited for a data-plane process',
    buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly dataPlaneQueueFull = new Counter({
    name: 'lance_catalog_data_plane_queue_full_total',
    help: "Data operations refused (503) because their database's queue was full (DATA_PLANE_QUEUE_PER_DATABASE)",
    registers: [this.registry],
  });
  readonly connectionsRefused = new Counter({
    name: 'lance_catalog_connections_refused_total',
    help: 'Connections refused (503) because their address already held CONNECTIONS_PER_ADDRESS open ones, or the server CONNECTIONS_MAX',
    registers: [this.registry],
  });
  readonly liveFeedsRefused = new Counter({
    name: 'lance_catalog_live_feeds_refused_total',
    help: 'Live history feeds refused (429) past LIVE_FEEDS_PER_PRINCIPAL or LIVE_FEEDS_MAX',
    labelNames: ['limit'],
    registers: [this.registry],
  });

  dataPlaneEnded(reason: DataPlaneEnd): void {
    this.dataPlaneEnds.inc({ reason });
  }

  constructor(private readonly options: MetricsOptions = {}) {
    this.projectionLag = new Gauge({
      name: 'lance_catalog_projection_lag_events',
      help: options.databaseLabels
        ? "Events in a database's stream that this process's projection has not folded yet"
        : "Events in the databases' streams that this process's projections have not folded yet, summed over databases",
      labelNames: options.databaseLabels ? ['database'] : [],
      registers: [this.registry],
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'lance_catalog_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /**
   * The change feed's sinks this process publishes (it holds their databases' leases), read when
   * scraped: lag in events (summed) and in seconds (the oldest waiting event), and events published
   * since start, by sink kind (`nats`, `webhook`) and, with database labels, database.
   */
  watchChangeFeed(lags: () => ReadonlyArray<{ database: string; sink: string; events: number; seconds: number; published: number }>): void {
    const labelNames = this.options.databaseLabels ? ['sink', 'database'] : ['sink'];
    const read = () => {
      const rows = new Map<string, { labels: Record<string, string>; events: number; seconds: number; published: number }>();
      for (const lag of lags()) {
        const labels: Record<string, string> = { sink: lag.sink.startsWith(WEBHOOK_SINK_PREFIX) ? 'webhook' : lag.sink, ...(this.options.databaseLabels ? { database: lag.database } : {}) };
        const key = JSON.stringify(labels);
        const row = rows.get(key) ?? { labels, events: 0, seconds: 0, published: 0 };
        row.events += lag.events;
        row.seconds = Math.max(row.seconds, lag.seconds);
        row.published += lag.published;
        rows.set(key, row);
      }
      return [...rows.values()];
    };
    new Gauge({
      name: 'lance_catalog_change_feed_lag_events',
      help: "Events of the log not yet published to a change-feed sink this process publishes (summed over its subscriptions)",
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const r of read()) this.set(r.labels, r.events);
      },
    });
    new Gauge({
      name: 'lance_catalog_change_feed_lag_seconds',
      help: 'How long the oldest event not yet published to a change-feed sink has waited',
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const r of read()) this.set(r.labels, r.seconds);
      },
    });
    new Counter({
      name: 'lance_catalog_change_feed_published_total',
      help: 'Events this process published to a change-feed sink since it started (a webhook counts the events it delivered or skipped by filter)',
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const r of read()) this.inc(r.labels, r.published);
      },
    });
  }

  /** How far each database's projection is behind its stream; one sum unless databases are labelled. */
  recordProjectionLag(lags: Iterable<readonly [database: string, events: number]>): void {
    let total = 0;
    // Only the databases held now are labelled: a projection let go takes its series with it.
    if (this.options.databaseLabels) this.projectionLag.reset();
    for (const [database, events] of lags) {
      if (this.options.databaseLabels) this.projectionLag.set({ database }, events);
      total += events;
    }
    if (!this.options.databaseLabels) this.projectionLag.set(total);
  }
}
