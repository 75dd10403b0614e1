import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { freePort } from './ports';
import { join } from 'node:path';
import { tempDataDir } from './server';

export interface RunningBalancer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';
/** deploy/nginx.conf, from test/support or, compiled for the benches, from dist/test/support. */
const TEMPLATE = [join(__dirname, '../../deploy/nginx.conf'), join(__dirname, '../../../deploy/nginx.conf')].find((p) => existsSync(p))!;

export { freePort };

/**
 * nginx from Debian's packages in front of the given API replicas, configured like deploy/nginx.conf
 * (fewest requests in flight, keep-alive upstreams, no body limit of its own: the API enforces BODY_LIMIT).
 */
export async function startNginx(upstreams: string[]): Promise<RunningBalancer> {
  if (spawnSync(NGINX, ['-v']).error) {
    throw new Error(`nginx is not installed (${NGINX}); install it with: apt-get install -y nginx-light`);
  }
  const dir = tempDataDir('nginx-');
  for (const sub of ['body', 'proxy']) mkdirSync(join(dir, sub));
  // nginx's workers drop to `nobody`: let them use the temp folders.
  for (const sub of ['', 'body', 'proxy']) chmodSync(join(dir, sub), 0o777);
  const port = await freePort();
  const template = readFileSync(TEMPLATE, 'utf8');
  const servers = upstreams.map((u) => `    server ${new URL(u).host} max_fails=0;`).join('\n');
  const conf = template
    .replace(/^( *)server api:2333[^\n]*$/m, servers)
    .replace('listen 8080;', `listen 127.0.0.1:${port};`)
    .replace('# test-only-directives', `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;`)
    .replace('# test-only-http-directives', `client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n  access_log off;`);
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${output}${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`nginx did not serve in 10 s: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url,
    process: child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
}
