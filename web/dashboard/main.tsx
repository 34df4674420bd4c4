// The floatip dashboard: GET /v1/dashboard every few seconds (no reload), drawn with preact.
// Under --api-auth=kubernetes the API answers 401/403 until the user gives a bearer token; a
// release asks first, then goes to POST /v1/ip with that token, judged as any API call.
import { type ComponentChildren, render } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { DashboardJson, EventJson, HolderJson } from '../../src/api/dashboard-wire.js';
import { type ReleaseAnswer, type Answer, fetchDashboard, release, saveToken, savedToken } from './api.js';
import { clock, count, duration, visible } from './format.js';
import { type Column, SortableTable } from './table.js';
import { UsageBar } from './usage.js';
import './dashboard.css';

/** How often the page asks again, at least; a slow answer (100,000 addresses) spaces the polls out. */
const POLL_MS = 2000;

const holderColumns = (now: number): Column<HolderJson>[] => [
  { label: 'IP', value: (h) => h.ip },
  { label: 'Key', value: (h) => h.key, show: (h) => <code>{visible(h.key)}</code> },
  { label: 'Pod', value: (h) => (h.pod ? `${h.namespace}/${h.pod}` : '') },
  { label: 'Node', value: (h) => h.node },
  { label: 'Policy', value: (h) => h.policy },
  { label: 'State', value: (h) => h.state },
  { label: 'Age', value: (h) => -h.since, show: (h) => (h.since ? duration(now - h.since) : '') },
];

const parkedColumns = (now: number): Column<HolderJson>[] => [
  ...holderColumns(now).filter((c) => c.label !== 'Node' && c.label !== 'State' && c.label !== 'Pod'),
  {
    label: 'TTL left',
    value: (h) => h.ttlLeftMs ?? Infinity,
    show: (h) => (h.ttlLeftMs === undefined ? 'none' : duration(h.ttlLeftMs)),
  },
];

const leakColumns = (now: number): Column<HolderJson>[] => [
  ...holderColumns(now).filter((c) => c.label !== 'State'),
  { label: 'Why', value: (h) => h.leak ?? '' },
];

const eventColumns: Column<EventJson>[] = [
  { label: 'Time', value: (e) => -e.time, show: (e) => clock(e.time) },
  { label: 'Type', value: (e) => e.type, show: (e) => <span class={`type ${e.type}`}>{e.type}</span> },
  { label: 'Reason', value: (e) => e.reason },
  { label: 'Object', value: (e) => e.object },
  { label: 'Message', value: (e) => e.message },
];

type Outcome = { ok: boolean; text: string };

function describeRelease(ip: string, answer: Answer<ReleaseAnswer>): Outcome {
  if (answer.status === 200) return { ok: true, text: `released ${ip}` };
  if (answer.status === 202) {
    const why = [answer.body?.reasons?.[0], answer.body?.details?.[0]].filter(Boolean).join(': ');
    return { ok: false, text: `${ip} was not released: ${why}` };
  }
  return { ok: false, text: `${ip} was not released (${answer.status}): ${answer.message}` };
}

function App() {
  const [token, setToken] = useState(savedToken());
  const [query, setQuery] = useState('');
  const [data, setData] = useState<DashboardJson | undefined>(undefined);
  const [problem, setProblem] = useState<{ status: number; message: string } | undefined>(undefined);
  const [updated, setUpdated] = useState(0);
  /** The address a release is asked for, and the row's button that asked, to get the focus back. */
  const [confirming, setConfirming] = useState<{ holder: HolderJson; opener: HTMLElement } | undefined>(
    undefined,
  );
  const [outcome, setOutcome] = useState<Outcome | undefined>(undefined);
  const [askToken, setAskToken] = useState(false);
  const refresh = useRef<() => void>(() => undefined);

  // one poll loop per token and search; an answer for an older search is dropped
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      clearTimeout(timer);
      const asked = performance.now();
      try {
        const answer = await fetchDashboard(token, query);
        if (stopped) return;
        if (answer.body) {
          setData(answer.body);
          setProblem(undefined);
          setUpdated(Date.now());
        } else {
          setProblem({ status: answer.status, message: answer.message });
          if (answer.status === 401 || answer.status === 403) setAskToken(true);
        }
      } catch (err) {
        if (!stopped) setProblem({ status: 0, message: `floatip did not answer: ${(err as Error).message}` });
      }
      // a page left open costs floatip at most a tenth of its time
      const wait = Math.max(POLL_MS, 10 * (performance.now() - asked));
      if (!stopped) timer = setTimeout(() => void poll(), wait);
    };
    refresh.current = () => void poll();
    const start = setTimeout(() => void poll(), query ? 200 : 0);
    return () => {
      stopped = true;
      clearTimeout(start);
      clearTimeout(timer);
    };
  }, [token, query]);

  const doRelease = async (h: HolderJson) => {
    setConfirming(undefined);
    try {
      const answer = await release(token, h);
      setOutcome(describeRelease(h.ip, answer));
      if (answer.status === 401 || answer.status === 403) setAskToken(true);
    } catch (err) {
      setOutcome({ ok: false, text: `${h.ip}: floatip did not answer: ${(err as Error).message}` });
    }
    refresh.current();
  };

  const now = data?.now ?? Date.now();
  const releaseButton = (h: HolderJson) =>
    h.releasable ? (
      <button
        type="button"
        class="release"
        onClick={(e) => setConfirming({ holder: h, opener: e.currentTarget as HTMLElement })}
      >
        Release
      </button>
    ) : null;

  return (
    <>
      <header class="top">
        <h1>floatip</h1>
        <span class="status" role="status">
          {problem ? (
            <span class="problem">{visible(problem.message)}</span>
          ) : updated ? (
            <span class="live">live · updated {clock(updated)}</span>
          ) : (
            'loading…'
          )}
        </span>
        <button type="button" class="token-button" onClick={() => setAskToken(!askToken)}>
          {token ? 'Token set' : 'Token'}
        </button>
      </header>
      {askToken ? (
        <TokenForm
          token={token}
          onSave={(t) => {
            saveToken(t);
            setToken(t);
            setAskToken(false);
          }}
        />
      ) : null}
      {outcome ? (
        <p class={outcome.ok ? 'outcome ok' : 'outcome refused'} role="alert">
          {visible(outcome.text)}
          <button type="button" aria-label="dismiss" onClick={() => setOutcome(undefined)}>
            ×
          </button>
        </p>
      ) : null}
      {data ? (
        <main>
          <section aria-labelledby="subnets">
            <h2 id="subnets">Subnets</h2>
            <div class="cards">
              {data.subnets.map((s) => (
                <UsageBar
                  key={s.entry}
                  title={s.subnet}
                  detail={`entry ${s.entry} · ${count(s.total)} addresses, ${s.excluded} never handed out`}
                  u={s}
                />
              ))}
            </div>
          </section>
          {data.pools.length ? (
            <section aria-labelledby="pools">
              <h2 id="pools">Pools</h2>
              <div class="cards">
                {data.pools.map((p) => (
                  <UsageBar
                    key={p.name}
                    title={`pool ${p.name}`}
                    detail={p.problem ? `size ${p.size}: ${p.problem}` : `size ${p.size}`}
                    u={p}
                  />
                ))}
              </div>
            </section>
          ) : null}
          <div class="search">
            <input
              type="search"
              aria-label="Search"
              placeholder="Search address, key, pod or node"
              value={query}
              onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
            />
          </div>
          <HolderSection
            id="holders"
            title="Holders"
            columns={holderColumns(now)}
            rows={data.holders}
            matched={data.matched.holders}
            empty={query ? `no address, key or node matches “${query}”` : 'no address is held'}
            actions={releaseButton}
          />
          <HolderSection
            id="parked"
            title="Parked"
            note={
              data.parkedTtlMs
                ? `--parked-ip-ttl is ${duration(data.parkedTtlMs)}: an app's never-released address is freed that long after it was parked, once the app is gone.`
                : '--parked-ip-ttl is off: parked addresses stay until released.'
            }
            columns={parkedColumns(now)}
            rows={data.parked}
            matched={data.matched.parked}
            empty="no address is parked"
            actions={releaseButton}
          />
          <HolderSection
            id="leaks"
            title="Leak candidates"
            note="Addresses whose pod is gone, finished or replaced, as floatip's pod cache sees it now; the resync releases them per their policy once it sees them twice."
            columns={leakColumns(now)}
            rows={data.leaks}
            matched={data.matched.leaks}
            empty="no leak candidate"
            actions={releaseButton}
          />
          <section aria-labelledby="events">
            <h2 id="events">Latest Events</h2>
            <SortableTable
              label="Events"
              columns={eventColumns}
              rows={data.events}
              rowKey={(e) => `${e.time} ${e.object} ${e.reason} ${e.message}`}
              matched={data.events.length}
              empty="no Event written since floatip started"
            />
          </section>
        </main>
      ) : null}
      {confirming ? (
        <ConfirmRelease
          holder={confirming.holder}
          opener={confirming.opener}
          onCancel={() => setConfirming(undefined)}
          onConfirm={() => void doRelease(confirming.holder)}
        />
      ) : null}
    </>
  );
}

/** One list of addresses: its title and count, a note, the table. */
function HolderSection(props: {
  id: string;
  title: string;
  note?: string;
  columns: Column<HolderJson>[];
  rows: HolderJson[];
  matched: number;
  empty: string;
  actions: (h: HolderJson) => ComponentChildren;
}) {
  return (
    <section aria-labelledby={props.id}>
      <h2 id={props.id}>
        {props.title} <span class="n">{props.matched}</span>
      </h2>
      {props.note ? <p class="note">{props.note}</p> : null}
      <SortableTable
        label={props.title}
        columns={props.columns}
        rows={props.rows}
        rowKey={(h) => h.ip}
        matched={props.matched}
        empty={props.empty}
        actions={props.actions}
      />
    </section>
  );
}

function TokenForm({ token, onSave }: { token: string; onSave: (token: string) => void }) {
  const [value, setValue] = useState(token);
  return (
    <form
      class="token"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(value.trim());
      }}
    >
      <label>
        Bearer token (floatip runs with --api-auth=kubernetes; e.g. <code>kubectl create token NAME</code>)
        <input
          type="password"
          autocomplete="off"
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit">Use token</button>
    </form>
  );
}

/**
 * A modal <dialog> (showModal): the page behind is inert, Escape cancels, and so does a click on
 * the backdrop (a click whose press and release are both on the <dialog> itself, outside its one
 * child that fills it; a text selection let go over the backdrop is not one). The focus goes to
 * Cancel and, when the dialog goes, back to the row's button. Its text scrolls inside it, so a
 * key thousands of characters long leaves the buttons on the screen.
 */
function ConfirmRelease(props: {
  holder: HolderJson;
  opener: HTMLElement;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const h = props.holder;
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const pressedOnBackdrop = useRef(false);
  const gone = useRef(false);
  useLayoutEffect(() => {
    const d = dialog.current!;
    d.showModal();
    cancel.current?.focus();
    const opener = props.opener;
    return () => {
      // still modal, it keeps the page inert and the focus out of it: closed first, quietly
      gone.current = true;
      if (d.open) d.close();
      if (opener.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={dialog}
      class="modal"
      aria-labelledby="confirm-title"
      onClose={() => {
        if (!gone.current) props.onCancel();
      }}
      onMouseDown={(e) => (pressedOnBackdrop.current = e.target === e.currentTarget)}
      onClick={(e) => {
        if (e.target === e.currentTarget && pressedOnBackdrop.current) props.onCancel();
      }}
    >
      <div class="modal-box">
        <h2 id="confirm-title">Release {h.ip}?</h2>
        <p class="modal-text">
          It is held by <code>{visible(h.key)}</code>
          {h.node ? ` on ${visible(h.node)}` : ''}. Released, it goes back to the free addresses and the next
          pod may get it.
        </p>
        <div class="modal-actions">
          <button type="button" ref={cancel} onClick={props.onCancel}>
            Cancel
          </button>
          <button type="button" class="danger" onClick={props.onConfirm}>
            Release {h.ip}
          </button>
        </div>
      </div>
    </dialog>
  );
}

render(<App />, document.getElementById('app')!);
